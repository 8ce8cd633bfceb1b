"""The research monitor's five conditions, applied to the very polls the
plugin made (its PollLog, see docs/configuration.md), for the evaluation's
side-by-side comparison. Python standard library only.

The research monitor decides each class from the latest snapshot of a
consumer (`now`) and the one before it (`prev`, `dt` seconds earlier):

  ACK_WAIT_VIOLATION    d = max(0, now.num_redelivered - prev.num_redelivered)
                        >= 2 and d / dt x 60 >= 2 per minute
  SEQUENCE_GAP          ack_floor.stream_seq > 0 and the stream's
                        first_seq > ack_floor.stream_seq + 1
  MAX_PENDING_THROTTLE  max_ack_pending > 0, num_ack_pending >=
                        max_ack_pending, num_pending > 0
  NAK_STORM             num_redelivered >= 2 in prev and in now, and
                        now.num_ack_pending > 0
  MISSING_PROGRESS      num_ack_pending / max_ack_pending > 0.9 and
                        ack_wait > 30 s

It reads CONSUMER.INFO and STREAM.INFO; CONSUMER.LIST and STREAM.LIST, which
the plugin polls, return the same fields. Only ACK_WAIT_VIOLATION comes with
a command: `nats consumer edit S C --ack-wait Ns`, N = max(0.9 x ack_wait,
120) + 60. MAX_PENDING_THROTTLE recommends a value (max_ack_pending x 1.5,
rounded up) and no command; the others give none.
"""

import json
import math

CLASSES = ["ACK_WAIT_VIOLATION", "SEQUENCE_GAP", "MAX_PENDING_THROTTLE",
           "NAK_STORM", "MISSING_PROGRESS"]

# The flags `nats consumer edit` takes (natscli's consumer command, its
# flags with edit set) and those of `nats stream edit` that fix commands
# use; a command with another flag is refused by the CLI.
CONSUMER_EDIT_FLAGS = {
    "--backoff", "--backoff-steps", "--backoff-min", "--backoff-max",
    "--description", "--filter", "--headers-only", "--max-deliver",
    "--max-outstanding", "--max-pending", "--max-pull-batch",
    "--max-pull-expire", "--max-pull-bytes", "--sample", "--target",
    "--wait", "--inactive-threshold", "--replicas", "--metadata",
    "--config", "--force", "--interactive", "--dry-run"}
# `nats consumer add` (natscli's cli/consumer_command.go), as the plugin
# prints it to create a consumer again: the flags it may print.
CONSUMER_ADD_FLAGS = {
    "--pull", "--ack", "--deliver", "--wait", "--max-deliver",
    "--max-pending", "--filter", "--inactive-threshold", "--defaults"}
STREAM_EDIT_FLAGS = {
    "--subjects", "--max-msgs", "--max-bytes", "--max-age", "--max-msg-size",
    "--max-msgs-per-subject", "--replicas", "--discard", "--description",
    "--dupe-window", "--force"}


class Snap:
    """The fields of one consumer at one poll that the conditions use."""
    __slots__ = ("t", "red", "ackp", "pend", "floor", "map", "aw_s",
                 "first")

    def __init__(self, t, c, first):
        cfg = c.get("config") or {}
        self.t = t
        self.red = int(c.get("num_redelivered") or 0)
        self.ackp = int(c.get("num_ack_pending") or 0)
        self.pend = int(c.get("num_pending") or 0)
        self.floor = int((c.get("ack_floor") or {}).get("stream_seq") or 0)
        self.map = int(cfg.get("max_ack_pending") or 0)
        self.aw_s = float(cfg.get("ack_wait") or 0) / 1e9
        self.first = first


def fired(prev, now):
    """The classes the monitor raises on the snapshot now (with prev, the
    one before it, or None)."""
    out = []
    if prev is not None:
        dt = now.t - prev.t
        d = max(0, now.red - prev.red)
        if dt > 0 and d >= 2 and d / dt * 60.0 >= 2.0:
            out.append("ACK_WAIT_VIOLATION")
    if now.floor > 0 and now.first is not None and \
            now.first > now.floor + 1:
        out.append("SEQUENCE_GAP")
    if now.map > 0 and now.ackp >= now.map and now.pend > 0:
        out.append("MAX_PENDING_THROTTLE")
    if prev is not None and prev.red >= 2 and now.red >= 2 and now.ackp > 0:
        out.append("NAK_STORM")
    if now.map > 0 and now.ackp / now.map > 0.9 and now.aw_s > 30:
        out.append("MISSING_PROGRESS")
    return out


def fix_of(cls, stream, consumer, snap):
    """The fix the monitor gives for cls on snap: (text, kind), kind
    "command", "value" or None."""
    if cls == "ACK_WAIT_VIOLATION":
        n = max(int(snap.aw_s * 0.9), 120) + 60
        return ("nats consumer edit %s %s --ack-wait %ds" % (
            stream, consumer, n), "command")
    if cls == "MAX_PENDING_THROTTLE":
        return ("max_ack_pending %d" % math.ceil(snap.map * 1.5), "value")
    return (None, None)


def command_valid(text):
    """True when text is a `nats consumer edit S C ...`, `nats consumer add
    S C ...` or `nats stream edit S ...` command whose flags the nats CLI
    has; None when text is no such command."""
    if not text:
        return None
    w = text.split()
    if w[:3] == ["nats", "consumer", "edit"] and len(w) >= 5:
        flags, known = w[5:], CONSUMER_EDIT_FLAGS
    elif w[:3] == ["nats", "consumer", "add"] and len(w) >= 5:
        flags, known = w[5:], CONSUMER_ADD_FLAGS
    elif w[:3] == ["nats", "stream", "edit"] and len(w) >= 4:
        flags, known = w[4:], STREAM_EDIT_FLAGS
    else:
        return None
    names = [f.split("=")[0] for f in flags if f.startswith("--")]
    return bool(names) and all(n in known for n in names)


def load(path, streams=None):
    """Reads a poll log: {(stream, consumer): [Snap, ...]} in poll order.
    With streams (a set), only those streams are kept. Lines that are not
    a readable poll reply are skipped."""
    firsts = {}  # (t, stream) -> first_seq
    pending = []  # (t, stream, consumer dict), resolved once firsts known
    with open(path, errors="replace") as fh:
        for line in fh:
            try:
                rec = json.loads(line)
                t, subj, reply = rec["t"], rec["subject"], rec["reply"]
            except (ValueError, KeyError, TypeError):
                continue
            if not isinstance(reply, dict):
                continue
            if subj.endswith(".STREAM.LIST"):
                for s in reply.get("streams") or []:
                    try:
                        name = s["config"]["name"]
                        if streams is None or name in streams:
                            firsts[(t, name)] = int(s["state"]["first_seq"])
                    except (KeyError, TypeError, ValueError):
                        continue
            elif ".CONSUMER.LIST." in subj:
                stream = subj.rsplit(".", 1)[1]
                if streams is not None and stream not in streams:
                    continue
                for c in reply.get("consumers") or []:
                    if isinstance(c, dict) and "name" in c:
                        pending.append((t, stream, c))
    out = {}
    for t, stream, c in pending:
        try:
            snap = Snap(t, c, firsts.get((t, stream)))
        except (TypeError, ValueError):
            continue
        out.setdefault((stream, c["name"]), []).append(snap)
    for snaps in out.values():
        snaps.sort(key=lambda s: s.t)
    return out


def timeline(snaps):
    """[(snap, classes fired)] for one consumer's snapshots."""
    prev, out = None, []
    for s in snaps:
        out.append((s, fired(prev, s)))
        prev = s
    return out


def onsets(line, t0, t1):
    """[(t, class)] of each class starting to fire (not firing on the poll
    before) in [t0, t1]: what a monitor without a hold reports as a new
    finding."""
    out, before = [], set()
    for s, classes in line:
        now = set(classes)
        if t0 <= s.t <= t1:
            out += [(s.t, c) for c in sorted(now - before)]
        before = now
    return out


def annotate(results, path):
    """Adds the monitor's view of each case to its result dict, from the
    poll log at path:

      ref_detected, ref_t_detect   the first poll from the injection to the
                                   fix (or the case's end) on which the
                                   expected class fired;
      ref_unexpected               onsets of the other four classes of the
                                   five, on the case's consumers, from the
                                   setup to the end (for a case that
                                   expects nothing, of all five);
      ref_fix, ref_fix_kind        its fix, and ref_fix_valid;
      ref_polls                    the case's polls in the log.
    """
    streams = set()
    for r in results:
        streams.add(r["stream"])
        streams.update(r.get("cleanup_streams") or [])
    polls = load(path, streams)
    by_stream = {}
    for (stream, consumer), snaps in polls.items():
        by_stream.setdefault(stream, []).append((consumer, timeline(snaps)))
    for r in results:
        t0 = r.get("t_setup")
        t_inj = r.get("t_inject")
        t_end = r.get("t_done") or r.get("t_end")
        if t0 is None or t_inj is None or t_end is None:
            continue
        exp = r.get("expect")
        t_stop = r.get("t_fix") or t_end
        lines = []
        for stream in [r["stream"]] + list(r.get("cleanup_streams") or []):
            lines += by_stream.get(stream, [])
        r["ref_polls"] = sum(len(line) for _, line in lines)
        det = None
        for consumer, line in lines:
            if consumer != r.get("consumer"):
                continue
            for s, classes in line:
                if t_inj <= s.t <= t_stop and exp in classes:
                    det = s
                    r["ref_fix"], r["ref_fix_kind"] = fix_of(
                        exp, r["stream"], consumer, s)
                    r["ref_fix_valid"] = command_valid(r["ref_fix"])
                    break
        r["ref_detected"] = det is not None if exp else None
        r["ref_t_detect"] = det.t if det is not None else None
        # Onsets from the setup to the end; the expected class's repeats
        # are those from the injection to the fix after the first (the
        # monitor has no hold, so a condition that comes and goes is
        # reported again each time).
        seen = [(consumer, t, c) for consumer, line in lines
                for t, c in onsets(line, t0, t_end)]
        r["ref_unexpected"] = [c for _, _, c in seen if c != exp]
        r["ref_refired"] = max(0, sum(
            1 for consumer, t, c in seen if c == exp and
            consumer == r.get("consumer") and t_inj <= t <= t_stop) - 1) \
            if exp else 0
