/* nl_judge.h: one consumer or stream judged by every class of the table
 * (detect/nl_classes.h), as detect/nl_class.h describes: the classes'
 * findings from the traffic and from the configuration, their precedence,
 * and their raise debounce. What it decides goes to the held findings
 * through nl_lifecycle. No class is named here. Pure but for the classes'
 * states, which it keeps in the consumer's or stream's slots. */
#ifndef NL_JUDGE_H
#define NL_JUDGE_H

#include "core/detect/nl_classes.h"
#include "nl_stream_store.h"

/* What one judgement found, by class. */
typedef struct {
  bool on[NL_CLASS_COUNT];
  nl_finding found[NL_CLASS_COUNT]; /* Where on. */
} nl_verdict;

/* Judges consumer x->st at a poll by every consumer class (detect and
 * configured, the masks in the order of precedence order, the debounce),
 * into v. */
void nl_judge_consumer(const nl_class order[NL_CLASS_COUNT],
                       const nl_consumer_ctx *x, nl_verdict *v);

/* Judges a consumer a CREATED advisory announced by the configured ops
 * alone (the others wait for a poll), into v. */
void nl_judge_created(const nl_consumer_ctx *x, nl_verdict *v);

/* Offers advisory a of consumer x->st, just recorded, to every class: its
 * record ops, and, when record_only is false, its advised ops into v. */
void nl_judge_advisory(const nl_consumer_ctx *x, const nl_advisory *a,
                       bool record_only, nl_verdict *v);

/* Which stream classes a stream judgement runs. */
typedef enum {
  NL_JUDGE_LISTED,      /* detect_stream of the classes not after_sweep */
  NL_JUDGE_AFTER_SWEEP, /* detect_stream of the after_sweep classes kept
                           for the stream (a state or a held finding) */
  NL_JUDGE_MISSING,     /* missing */
} nl_judge_phase;

/* Judges the stream of r at a poll by the stream classes of phase into v
 * (classes of other phases off). */
void nl_judge_stream(const nl_class order[NL_CLASS_COUNT], nl_stream_rec *r,
                     const nl_stream_ctx *x, nl_judge_phase phase,
                     nl_verdict *v);

/* Hands consumer g->st, which the poll no longer lists, to the classes
 * that keep what a consumer leaves (gone), into the slots of its stream's
 * record r. */
void nl_judge_gone(const nl_gone_ctx *g, nl_stream_rec *r);

/* Drops the states of r's stream classes that forget on event (an
 * NL_FORGET_* bit), and, for a stream led elsewhere or not listed, every
 * class's run of polls towards its raise debounce. */
void nl_judge_forget(nl_stream_rec *r, unsigned event);

#endif
