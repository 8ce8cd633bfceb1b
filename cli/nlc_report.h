/* nlc_report.h: the findings of one nats-lens-check run, as a text table,
 * one JSON document, or Nagios plugin output, and the exit status. */
#ifndef NLC_REPORT_H
#define NLC_REPORT_H

#include "core/model/nl_finding.h"
#include "nlc_options.h"

#include <stdio.h>

/* Nagios plugin states, also the exit statuses of the check. */
#define NLC_OK 0
#define NLC_WARNING 1
#define NLC_CRITICAL 2
#define NLC_UNKNOWN 3

/* One finding to report; all pointers borrowed. */
typedef struct {
  const char *kind;     /* "config" (audit) or "live" (detectors). */
  const char *account;  /* The stream's account (--system-account), or NULL. */
  const char *cls;      /* Class name. */
  const char *stream;   /* Stream name. */
  const char *consumer; /* Consumer name, NULL for a stream finding. */
  const nl_finding *f;
} nlc_row;

typedef struct {
  const char *server; /* The URLs as given. */
  double watch_s;     /* 0: configuration audit only. */
  unsigned samples;
  size_t streams;   /* Streams checked (selected). */
  size_t consumers; /* Consumers checked. */
  size_t accounts;  /* Accounts checked (--system-account), else 0. */
  int64_t checked_at_ns;
  nlc_row *rows; /* Sorted by nlc_report_sort. */
  size_t n_rows;
} nlc_report;

/* Sorts the rows: critical first, then by account, stream, consumer and
 * class; the
 * order of equal rows is kept. */
void nlc_report_sort(nlc_report *r);

/* Counts the rows of a severity. */
size_t nlc_report_count(const nlc_report *r, nl_severity sev);

/* Returns the Nagios state of the findings: NLC_CRITICAL, NLC_WARNING or
 * NLC_OK. */
int nlc_report_state(const nlc_report *r);

/* Returns the exit status for format: the Nagios state for nagios; for
 * text and json, the state when it reaches fail_on, else NLC_OK. */
int nlc_report_exit_code(const nlc_report *r, nlc_format format,
                         nl_severity fail_on);

/* Writes the report in a format. color adds ANSI colours (text only). */
void nlc_print_text(FILE *out, const nlc_report *r, bool color);
void nlc_print_json(FILE *out, const nlc_report *r, int exit_code);
void nlc_print_nagios(FILE *out, const nlc_report *r);

/* Writes the Nagios UNKNOWN line for an error. */
void nlc_print_nagios_unknown(FILE *out, const char *message);

#endif
