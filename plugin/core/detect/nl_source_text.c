/* nl_source_text.c: the evidence and text of a SOURCE_STALLED finding. */
#include "nl_source_text.h"

#include "core/model/nl_names.h"

#include <stdio.h>
#include <string.h>

/* err_code of the server's "stream not found" error. */
#define ERR_STREAM_NOT_FOUND 10059

/* The names a finding's text shows: the copy and its origin, printable,
 * and the copy as a shell word with its configuration file for the fix. */
typedef struct {
  char copy[NL_NAME_MAX + 1];
  char origin[NL_NAME_MAX + 1];
  char word[NL_SHELL_NAME_MAX];
  char file[NL_SHELL_NAME_MAX + 8];
} names;

static void names_of(const nl_stream_snap *copy, const nl_source_link *l,
                     names *n) {
  nl_printable(copy->name, false, n->copy, sizeof(n->copy));
  nl_printable(l->name, false, n->origin, sizeof(n->origin));
  char file[NL_NAME_MAX + 8];
  snprintf(file, sizeof(file), "%s.json", copy->name);
  nl_shell_word(copy->name, n->word, sizeof(n->word));
  nl_shell_word(file, n->file, sizeof(n->file));
}

static void add_evidence(const nl_stream_snap *copy, nl_source_cause cause,
                         const nl_source_view *v, unsigned links_stalled,
                         nl_finding *f) {
  const nl_source_link *l = v->link;
  nl_finding_add(f, "mirror", copy->is_mirror);
  nl_finding_add(f, "origin_visible", v->origin != NULL);
  nl_finding_add(f, "origin_recreated",
                 v->recreated || cause == NL_SOURCE_NEWER);
  nl_finding_add(f, "copy_last_seq", (double)copy->last_seq);
  if (v->origin != NULL)
    nl_finding_add(f, "origin_last_seq", (double)v->origin->last_seq);
  nl_finding_add(f, "no_progress_s", nl_seconds(v->no_progress_ns));
  nl_finding_add(f, "active_s",
                 l->active_ns >= 0 ? nl_seconds(l->active_ns) : -1);
  nl_finding_add(f, "lag", (double)l->lag);
  if (l->error_code != 0)
    nl_finding_add(f, "error_code", (double)l->error_code);
  if (v->recreated) {
    nl_finding_add(f, "lost_total", (double)v->lost);
    if (v->lost > 0) {
      nl_finding_add(f, "first_lost_seq", (double)(v->origin_start + 1));
      nl_finding_add(f, "last_lost_seq", (double)(v->origin_start + v->lost));
    }
  }
  nl_finding_add(f, "links", (double)copy->n_links);
  nl_finding_add(f, "links_stalled", links_stalled);
}

/* The fix for a copy that skipped messages of a recreated origin: the
 * copy created again from its own configuration. */
static void fix_recreate(const nl_stream_snap *copy, const names *n,
                         nl_finding *f) {
  snprintf(f->fix_command, sizeof(f->fix_command),
           "nats stream info %s --json > %s && nats stream rm %s -f && "
           "nats stream add %s --config %s",
           n->word, n->file, n->word, n->word, n->file);
  snprintf(f->recommendation, sizeof(f->recommendation),
           "create %.100s again from its own configuration so that it takes "
           "%.100s from its first message: a mirror cannot be edited, and "
           "the server keeps a source's position when only its start is "
           "edited. This deletes the %llu messages %.100s holds (copies of "
           "the old %.100s: keep them first with nats stream backup if "
           "needed) and its consumers (create them again)",
           n->copy, n->origin, (unsigned long long)copy->msgs, n->copy,
           n->origin);
}

/* A sentence on an origin the poll could not see. */
static const char *unseen(const nl_source_view *v) {
  if (v->origin != NULL)
    return "";
  return v->link->external
             ? "; its origin is in another domain or account, so whether it "
               "holds new messages could not be checked"
             : "; its origin is not listed, so whether it holds new "
               "messages could not be checked";
}

void nl_source_finding(const nl_stream_snap *copy, nl_source_cause cause,
                       const nl_source_view *v, unsigned links_stalled,
                       nl_finding *f) {
  nl_finding_start(f, NL_SOURCE_STALLED);
  add_evidence(copy, cause, v, links_stalled, f);
  names n;
  names_of(copy, v->link, &n);
  const char *kind = copy->is_mirror ? "mirror" : "sourced stream";
  const nl_source_link *l = v->link;
  unsigned long long last = v->origin ? v->origin->last_seq : 0;
  switch (cause) {
  case NL_SOURCE_RECREATED:
    if (v->ahead)
      snprintf(f->description, sizeof(f->description),
               "mirror %.100s stopped taking messages: its origin %.100s was "
               "deleted and created again and ends at sequence %llu, below "
               "the %llu the mirror holds; the mirror skips the new "
               "origin's messages up to its own position (%llu lost so far)",
               n.copy, n.origin, last, (unsigned long long)copy->last_seq,
               (unsigned long long)v->lost);
    else
      snprintf(f->description, sizeof(f->description),
               "%s %.100s skipped %llu messages of its origin %.100s: the "
               "origin was deleted and created again, and the copy resumed "
               "past its first messages (sequences %llu to %llu of the new "
               "origin at least)",
               kind, n.copy, (unsigned long long)v->lost, n.origin,
               (unsigned long long)(v->origin_start + 1),
               (unsigned long long)(v->origin_start + v->lost));
    fix_recreate(copy, &n, f);
    return;
  case NL_SOURCE_NEWER:
    snprintf(f->description, sizeof(f->description),
             "sourced stream %.100s has taken nothing from %.100s since that "
             "origin was created (its newest message is older), though the "
             "origin holds %llu messages: the origin was deleted and created "
             "again and the copy stalled or resumed past them",
             n.copy, n.origin, (unsigned long long)v->origin->msgs);
    fix_recreate(copy, &n, f);
    return;
  case NL_SOURCE_STALLED_GAIN:
    snprintf(f->description, sizeof(f->description),
             "%s %.100s has taken no message for %.0f s though its origin "
             "%.100s has new ones (last sequence %llu)",
             kind, n.copy, nl_seconds(v->no_progress_ns), n.origin, last);
    snprintf(f->recommendation, sizeof(f->recommendation),
             "%s; the server retries a stalled %s on its own (within 20 s), "
             "so one that stays stalled has a cause to remove: read the log "
             "of the server that leads %.100s for errors about it",
             copy->discard_new ? "a copy with discard new refuses what it "
                                 "takes once full: give it room"
                               : "check the copy's limits and the origin",
             kind, n.copy);
    return;
  case NL_SOURCE_WAITING:
    snprintf(f->description, sizeof(f->description),
             "%s %.100s has taken no message for %.0f s though its origin "
             "%.100s had %llu more waiting at its last delivery%s",
             kind, n.copy, nl_seconds(v->no_progress_ns), n.origin,
             (unsigned long long)l->lag, unseen(v));
    snprintf(f->recommendation, sizeof(f->recommendation), "%s",
             l->external
                 ? "an origin in another account stops delivering at its "
                   "first flow-control request when the copy's reply cannot "
                   "reach that account: there, export { service: "
                   "\"$JS.FC.>\" }; in the copy's account, import { service: "
                   "{ account: <origin account>, subject: \"$JS.FC.>\" } } "
                   "(next to the imports of the origin's $JS.API.CONSUMER.> "
                   "and of the delivery subject); in another domain, check "
                   "the leaf node or gateway to it"
                 : "read the log of the server that leads the copy for errors "
                   "about its source");
    return;
  case NL_SOURCE_SILENT:
  default:
    snprintf(f->description, sizeof(f->description),
             "%s %.100s has heard nothing from its origin %.100s for %.0f s, "
             "not even its heartbeat%s%.96s%s",
             kind, n.copy, n.origin, nl_seconds(v->silent_ns),
             l->error[0] ? " (error: " : "", l->error,
             l->error[0] ? ")" : unseen(v));
    if (l->error_code == ERR_STREAM_NOT_FOUND)
      snprintf(f->recommendation, sizeof(f->recommendation),
               "the origin %.100s does not exist: create it again or remove "
               "it from %.100s's configuration; a copy resumes at its old "
               "position in an origin created again, so create %.100s again "
               "after it",
               n.origin, n.copy, n.copy);
    else
      snprintf(f->recommendation, sizeof(f->recommendation),
               "check the path to the origin (%s) and the log of the server "
               "that leads %.100s",
               l->external ? "the leaf node or gateway to its domain, and "
                             "the import of its API prefix"
                           : "its stream leader",
               n.copy);
    return;
  }
}
