/* nlc_report.c: text, JSON and Nagios output of nats-lens-check. */
#include "nlc_report.h"

#include "core/model/nl_names.h"
#include "core/report/nl_json.h"

#include <json-c/json.h>
#include <stdlib.h>
#include <string.h>

/* Larger than any name or text a finding holds. */
#define CLEAN_MAX (2 * NL_NAME_MAX + NL_TEXT_MAX)

static int severity_rank(nl_severity s) {
  return s == NL_SEVERITY_CRITICAL ? 0 : 1;
}

/* Returns a - b as -1/0/1 for strings where NULL sorts first. */
static int cmp_str(const char *a, const char *b) {
  if (a == NULL || b == NULL)
    return (a != NULL) - (b != NULL);
  return strcmp(a, b);
}

/* qsort keeps no order of equal items: the position breaks ties. */
typedef struct {
  nlc_row row;
  size_t pos;
} ranked;

static int cmp_rows(const void *x, const void *y) {
  const ranked *a = x, *b = y;
  int d = severity_rank(a->row.f->severity) - severity_rank(b->row.f->severity);
  if (d == 0)
    d = cmp_str(a->row.account, b->row.account);
  if (d == 0)
    d = cmp_str(a->row.stream, b->row.stream);
  if (d == 0)
    d = cmp_str(a->row.consumer, b->row.consumer);
  if (d == 0)
    d = cmp_str(a->row.cls, b->row.cls);
  if (d == 0)
    d = (a->pos > b->pos) - (a->pos < b->pos);
  return d;
}

void nlc_report_sort(nlc_report *r) {
  ranked *tmp = malloc((r->n_rows ? r->n_rows : 1) * sizeof(*tmp));
  if (tmp == NULL)
    return; /* Unsorted output is still complete. */
  for (size_t i = 0; i < r->n_rows; i++)
    tmp[i] = (ranked){r->rows[i], i};
  qsort(tmp, r->n_rows, sizeof(*tmp), cmp_rows);
  for (size_t i = 0; i < r->n_rows; i++)
    r->rows[i] = tmp[i].row;
  free(tmp);
}

size_t nlc_report_count(const nlc_report *r, nl_severity sev) {
  size_t n = 0;
  for (size_t i = 0; i < r->n_rows; i++)
    n += r->rows[i].f->severity == sev;
  return n;
}

int nlc_report_state(const nlc_report *r) {
  if (nlc_report_count(r, NL_SEVERITY_CRITICAL) > 0)
    return NLC_CRITICAL;
  return nlc_report_count(r, NL_SEVERITY_WARNING) > 0 ? NLC_WARNING : NLC_OK;
}

int nlc_report_exit_code(const nlc_report *r, nlc_format format,
                         nl_severity fail_on) {
  int state = nlc_report_state(r);
  if (format == NLC_FORMAT_NAGIOS)
    return state;
  int threshold = fail_on == NL_SEVERITY_WARNING ? NLC_WARNING : NLC_CRITICAL;
  return state >= threshold ? state : NLC_OK;
}

static const char *state_name(int state) {
  static const char *const names[] = {"OK", "WARNING", "CRITICAL", "UNKNOWN"};
  return state >= 0 && state <= 3 ? names[state] : "UNKNOWN";
}

/* Writes "N critical, N warning(s)" into buf. */
static const char *counts_text(const nlc_report *r, char *buf, size_t len) {
  size_t c = nlc_report_count(r, NL_SEVERITY_CRITICAL);
  size_t w = nlc_report_count(r, NL_SEVERITY_WARNING);
  snprintf(buf, len, "%zu critical, %zu warning%s", c, w, w == 1 ? "" : "s");
  return buf;
}

/* ANSI colours of the text format. */
typedef struct {
  const char *critical, *warning, *ok, *dim, *off;
} palette;

static palette colours(bool on) {
  if (!on)
    return (palette){"", "", "", "", ""};
  return (palette){"\033[1;31m", "\033[33m", "\033[32m", "\033[2m", "\033[0m"};
}

/* Writes text after a label, folded at spaces to lines of about 78
 * columns, continuation lines indented to the text. */
static void folded(FILE *out, const char *label, const char *text) {
  const int indent = 13, width = 78;
  char buf[CLEAN_MAX];
  nl_printable(text, false, buf, sizeof(buf));
  fprintf(out, "  %-*s", indent - 2, label);
  int col = indent;
  const char *p = buf;
  while (*p) {
    size_t n = strcspn(p, " ");
    if (col > indent && col + 1 + (int)n > width) {
      fprintf(out, "\n%*s", indent, "");
      col = indent;
    } else if (col > indent) {
      fputc(' ', out);
      col++;
    }
    fwrite(p, 1, n, out);
    col += (int)n;
    p += n;
    while (*p == ' ')
      p++;
  }
  fputc('\n', out);
}

static const char *mode_text(const nlc_report *r, char *buf, size_t len) {
  if (r->watch_s > 0)
    snprintf(buf, len,
             "configuration audit and live detectors (%u snapshots "
             "%g s apart)",
             r->samples, r->watch_s);
  else
    snprintf(buf, len, "configuration audit");
  return buf;
}

/* " (account A)" for a row of an account, else "": written into buf. */
static const char *in_account(const nlc_row *row, bool ascii, char *buf,
                              size_t len) {
  char a[CLEAN_MAX];
  buf[0] = '\0';
  if (row->account != NULL)
    snprintf(buf, len, " (account %s)",
             nl_printable(row->account, ascii, a, sizeof(a)));
  return buf;
}

void nlc_print_text(FILE *out, const nlc_report *r, bool color) {
  palette c = colours(color);
  char a[CLEAN_MAX], b[CLEAN_MAX], mode[160], counts[80];
  char acc[CLEAN_MAX + 16] = "";
  if (r->accounts > 0)
    snprintf(acc, sizeof(acc), "%zu accounts, ", r->accounts);
  fprintf(out, "nats-lens-check %s: %s: %s%zu streams, %zu consumers, %s\n",
          NL_VERSION, nl_printable(r->server, false, a, sizeof(a)), acc,
          r->streams, r->consumers, mode_text(r, mode, sizeof(mode)));
  if (r->n_rows == 0) {
    fprintf(out, "\n%sOK%s: no findings\n", c.ok, c.off);
    return;
  }
  /* The table: one line per finding, columns as wide as their contents
   * (within limits). */
  int wc = 5, ws = 6, wa = r->accounts > 0 ? 7 : 0;
  for (size_t i = 0; i < r->n_rows; i++) {
    int n = (int)strlen(r->rows[i].cls);
    wc = n > wc ? n : wc;
    if (r->accounts > 0) {
      n = (int)strlen(nl_printable(
          r->rows[i].account ? r->rows[i].account : "-", false, a, sizeof(a)));
      wa = n > wa ? (n > 40 ? 40 : n) : wa;
    }
    n = (int)strlen(nl_printable(r->rows[i].stream, false, a, sizeof(a)));
    ws = n > ws ? (n > 40 ? 40 : n) : ws;
  }
  /* With --system-account an ACCOUNT column comes before STREAM. */
  fprintf(out, "\n%s%-8s  %-*s  %-6s  ", c.dim, "SEVERITY", wc, "CLASS",
          "KIND");
  if (wa > 0)
    fprintf(out, "%-*s  ", wa, "ACCOUNT");
  fprintf(out, "%-*s  %s%s\n", ws, "STREAM", "CONSUMER", c.off);
  for (size_t i = 0; i < r->n_rows; i++) {
    const nlc_row *row = &r->rows[i];
    bool crit = row->f->severity == NL_SEVERITY_CRITICAL;
    fprintf(out, "%s%-8s%s  %-*s  %-6s  ", crit ? c.critical : c.warning,
            crit ? "CRITICAL" : "WARNING", c.off, wc, row->cls, row->kind);
    if (wa > 0)
      fprintf(
          out, "%-*s  ", wa,
          nl_printable(row->account ? row->account : "-", false, a, sizeof(a)));
    fprintf(
        out, "%-*s  %s\n", ws, nl_printable(row->stream, false, a, sizeof(a)),
        row->consumer ? nl_printable(row->consumer, false, b, sizeof(b)) : "-");
  }
  /* The details of each finding. */
  for (size_t i = 0; i < r->n_rows; i++) {
    const nlc_row *row = &r->rows[i];
    bool crit = row->f->severity == NL_SEVERITY_CRITICAL;
    char evidence[NL_TEXT_MAX], acc_text[CLEAN_MAX + 16];
    fprintf(out, "\n%s%s%s %s %s%s%s%s (%s)\n", crit ? c.critical : c.warning,
            crit ? "CRITICAL" : "WARNING", c.off, row->cls,
            nl_printable(row->stream, false, a, sizeof(a)),
            row->consumer ? "/" : "",
            row->consumer ? nl_printable(row->consumer, false, b, sizeof(b))
                          : "",
            in_account(row, false, acc_text, sizeof(acc_text)), row->kind);
    folded(out, "problem", row->f->description);
    if (row->f->n_evidence > 0)
      folded(out, "evidence",
             nl_finding_format_evidence(row->f, evidence, sizeof(evidence)));
    /* The fix command stays on one line, to be copied whole. */
    fprintf(out, "  %-11s%s\n", "fix",
            nl_printable(row->f->fix_command, false, a, sizeof(a)));
    folded(out, "recommend", row->f->recommendation);
  }
  int state = nlc_report_state(r);
  fprintf(out, "\n%s%s%s: %s\n", state == NLC_CRITICAL ? c.critical : c.warning,
          state_name(state), c.off, counts_text(r, counts, sizeof(counts)));
}

static json_object *json_row(const nlc_row *row) {
  json_object *o = json_object_new_object();
  nl_json_add_string(o, "class", row->cls);
  nl_json_add_string(o, "kind", row->kind);
  nl_json_add_string(o, "severity", nl_severity_name(row->f->severity));
  if (row->account != NULL)
    nl_json_add_string(o, "account", row->account);
  nl_json_add_string(o, "stream", row->stream);
  nl_json_add_string(o, "consumer", row->consumer);
  nl_json_add_string(o, "description", row->f->description);
  json_object *ev = json_object_new_object();
  for (int i = 0; i < row->f->n_evidence; i++)
    nl_json_add_number(ev, row->f->evidence[i].name, row->f->evidence[i].value);
  json_object_object_add(o, "evidence", ev);
  nl_json_add_string(o, "fix_command", row->f->fix_command);
  nl_json_add_string(o, "recommendation", row->f->recommendation);
  if (row->f->since_ns > 0)
    nl_json_add_time(o, "since", row->f->since_ns);
  return o;
}

void nlc_print_json(FILE *out, const nlc_report *r, int exit_code) {
  static const char *const states[] = {"ok", "warning", "critical"};
  json_object *doc = json_object_new_object();
  nl_json_add_string(doc, "tool", "nats-lens-check");
  nl_json_add_string(doc, "version", NL_VERSION);
  nl_json_add_string(doc, "server", r->server);
  nl_json_add_time(doc, "checked_at", r->checked_at_ns);
  nl_json_add_string(doc, "mode", r->watch_s > 0 ? "watch" : "audit");
  if (r->watch_s > 0) {
    json_object *w = json_object_new_object();
    nl_json_add_number(w, "interval_s", r->watch_s);
    nl_json_add_number(w, "samples", r->samples);
    json_object_object_add(doc, "watch", w);
  }
  if (r->accounts > 0)
    nl_json_add_number(doc, "accounts", (double)r->accounts);
  nl_json_add_number(doc, "streams", (double)r->streams);
  nl_json_add_number(doc, "consumers", (double)r->consumers);
  nl_json_add_string(doc, "status", states[nlc_report_state(r)]);
  nl_json_add_number(doc, "exit_code", exit_code);
  json_object *sum = json_object_new_object();
  nl_json_add_number(sum, "critical",
                     (double)nlc_report_count(r, NL_SEVERITY_CRITICAL));
  nl_json_add_number(sum, "warning",
                     (double)nlc_report_count(r, NL_SEVERITY_WARNING));
  nl_json_add_number(sum, "total", (double)r->n_rows);
  json_object_object_add(doc, "summary", sum);
  json_object *arr = json_object_new_array();
  for (size_t i = 0; i < r->n_rows; i++)
    json_object_array_add(arr, json_row(&r->rows[i]));
  json_object_object_add(doc, "findings", arr);
  fprintf(out, "%s\n",
          json_object_to_json_string_ext(
              doc, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED |
                       JSON_C_TO_STRING_NOSLASHESCAPE));
  json_object_put(doc);
}

void nlc_print_nagios(FILE *out, const nlc_report *r) {
  int state = nlc_report_state(r);
  char counts[80], a[CLEAN_MAX], b[CLEAN_MAX], d[CLEAN_MAX];
  size_t crit = nlc_report_count(r, NL_SEVERITY_CRITICAL);
  size_t warn = nlc_report_count(r, NL_SEVERITY_WARNING);
  if (state == NLC_OK)
    fprintf(out, "NATS-LENS OK - no findings");
  else
    fprintf(out, "NATS-LENS %s - %s", state_name(state),
            counts_text(r, counts, sizeof(counts)));
  fprintf(out,
          " (%zu streams, %zu consumers) | critical=%zu warning=%zu "
          "streams=%zu consumers=%zu\n",
          r->streams, r->consumers, crit, warn, r->streams, r->consumers);
  for (size_t i = 0; i < r->n_rows; i++) {
    const nlc_row *row = &r->rows[i];
    char fix[CLEAN_MAX], acc_text[CLEAN_MAX + 16];
    fprintf(out, "%s %s %s%s%s%s: %s; fix: %s\n",
            row->f->severity == NL_SEVERITY_CRITICAL ? "CRITICAL" : "WARNING",
            row->cls, nl_printable(row->stream, true, a, sizeof(a)),
            row->consumer ? "/" : "",
            row->consumer ? nl_printable(row->consumer, true, b, sizeof(b))
                          : "",
            in_account(row, true, acc_text, sizeof(acc_text)),
            nl_printable(row->f->description, true, d, sizeof(d)),
            nl_printable(row->f->fix_command, true, fix, sizeof(fix)));
  }
}

void nlc_print_nagios_unknown(FILE *out, const char *message) {
  char m[CLEAN_MAX];
  fprintf(out, "NATS-LENS UNKNOWN - %s\n",
          nl_printable(message, true, m, sizeof(m)));
}
