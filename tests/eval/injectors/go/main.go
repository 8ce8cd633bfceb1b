// Command nl-consume-go is the Go fault injector: a JetStream pull consumer
// written with the nats.go client (Debian golang-github-nats-io-go-nats-dev).
//
// Same command line and summary line as `nl-inject consume` for the options
// the evaluation scenarios use:
//
//	nl-consume-go [--server URL] consume STREAM CONSUMER --duration S
//	    [--batch B] [--workers W] [--process-ms P] [--slow-every K --slow-ms P2]
//	    [--in-progress [--progress-ms MS]] [--nak | --nak-seq-mod K | --no-ack]
//	    [--term-seq-mod K] [--expires-ms MS]
//
// Each worker binds its own pull subscription to the durable consumer
// (nats.Bind), fetches with Fetch(batch, MaxWait), models the processing
// time and answers with Ack, Nak, InProgress or Term. Exit status 0, 1 on a
// connection error, 2 on a usage error.
package main

import (
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"
)

var flags = map[string]bool{"--in-progress": true, "--nak": true, "--no-ack": true, "--verbose": true}
var valued = map[string]bool{"--server": true, "--duration": true, "--batch": true, "--workers": true,
	"--process-ms": true, "--slow-every": true, "--slow-ms": true, "--progress-ms": true,
	"--nak-seq-mod": true, "--term-seq-mod": true, "--expires-ms": true, "--mode": true, "--max-msgs": true}

func usage(msg string) {
	fmt.Fprintf(os.Stderr, "nl-consume-go: %s\nusage: nl-consume-go [--server URL] consume STREAM CONSUMER --duration S [options]\n", msg)
	os.Exit(2)
}

// run holds the settings and shared counters of one consume run.
type run struct {
	batch, workers, processMs, slowEvery, slowMs, progressMs int64
	nakMod, termMod, expiresMs, maxMsgs                      int64
	inProgress, nakAll, noAck                                bool
	deadline                                                 time.Time
	received, redeliveredSeen, acked, naked, termed          int64
	inProgressSent, abandoned, maxDelivered, statusMsgs      int64
	pullRequests, taken                                      int64
	stop                                                     atomic.Bool
}

// handle processes one message: waits the modelled time (sending +WPI when
// asked), then acks, NAKs, terms or leaves it. It returns false when the
// deadline cut the processing short.
func (r *run) handle(m *nats.Msg) bool {
	md, err := m.Metadata()
	if err != nil {
		atomic.AddInt64(&r.statusMsgs, 1)
		return true
	}
	atomic.AddInt64(&r.received, 1)
	if md.NumDelivered > 1 {
		atomic.AddInt64(&r.redeliveredSeen, 1)
	}
	for {
		prev := atomic.LoadInt64(&r.maxDelivered)
		if int64(md.NumDelivered) <= prev ||
			atomic.CompareAndSwapInt64(&r.maxDelivered, prev, int64(md.NumDelivered)) {
			break
		}
	}
	sseq := int64(md.Sequence.Stream)
	work := r.processMs
	if r.slowEvery > 0 && sseq%r.slowEvery == 0 {
		work = r.slowMs
	}
	end := time.Now().Add(time.Duration(work) * time.Millisecond)
	nextWpi := time.Now().Add(time.Duration(r.progressMs) * time.Millisecond)
	for {
		now := time.Now()
		if !now.Before(end) {
			break
		}
		if !now.Before(r.deadline) {
			atomic.AddInt64(&r.abandoned, 1)
			return false
		}
		if r.inProgress && !now.Before(nextWpi) {
			m.InProgress()
			atomic.AddInt64(&r.inProgressSent, 1)
			nextWpi = now.Add(time.Duration(r.progressMs) * time.Millisecond)
		}
		until := end
		if r.inProgress && nextWpi.Before(until) {
			until = nextWpi
		}
		if r.deadline.Before(until) {
			until = r.deadline
		}
		step := until.Sub(now)
		if step > 50*time.Millisecond {
			step = 50 * time.Millisecond
		}
		time.Sleep(step)
	}
	switch {
	case r.termMod > 0 && sseq%r.termMod == 0:
		m.Term()
		atomic.AddInt64(&r.termed, 1)
	case r.nakAll || (r.nakMod > 0 && sseq%r.nakMod == 0):
		m.Nak()
		atomic.AddInt64(&r.naked, 1)
	case !r.noAck:
		m.Ack()
		atomic.AddInt64(&r.acked, 1)
	}
	return true
}

// worker fetches and handles messages on its own bound pull subscription
// until the deadline.
func (r *run) worker(js nats.JetStreamContext, stream, consumer string, wg *sync.WaitGroup) {
	defer wg.Done()
	sub, err := js.PullSubscribe("", consumer, nats.Bind(stream, consumer))
	if err != nil {
		fmt.Fprintf(os.Stderr, "nl-consume-go: bind %s.%s: %v\n", stream, consumer, err)
		os.Exit(1)
	}
	defer sub.Unsubscribe()
	for !r.stop.Load() && time.Until(r.deadline) > 20*time.Millisecond {
		wait := time.Duration(r.expiresMs) * time.Millisecond
		if rem := time.Until(r.deadline); rem < wait {
			wait = rem
		}
		atomic.AddInt64(&r.pullRequests, 1)
		msgs, err := sub.Fetch(int(r.batch), nats.MaxWait(wait))
		if err != nil {
			// A timeout or a status reply (404, 408, 409) ends this request.
			atomic.AddInt64(&r.statusMsgs, 1)
			if err != nats.ErrTimeout {
				time.Sleep(50 * time.Millisecond)
			}
			continue
		}
		for _, m := range msgs {
			if r.maxMsgs > 0 && atomic.AddInt64(&r.taken, 1) > r.maxMsgs {
				r.stop.Store(true)
				break
			}
			if !r.handle(m) {
				break
			}
		}
	}
}

func main() {
	var pos []string
	opts := map[string]string{}
	args := os.Args[1:]
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case flags[a]:
			opts[a] = "1"
		case valued[a]:
			if i+1 >= len(args) {
				usage(a + " needs a value")
			}
			opts[a] = args[i+1]
			i++
		case len(a) > 2 && a[:2] == "--":
			usage("unknown option " + a)
		default:
			pos = append(pos, a)
		}
	}
	if len(pos) != 3 || pos[0] != "consume" {
		usage("expected: consume STREAM CONSUMER --duration S ...")
	}
	if m, ok := opts["--mode"]; ok && m != "pull" {
		usage("only --mode pull is implemented")
	}
	num := func(name string, def int64) int64 {
		v, ok := opts[name]
		if !ok {
			return def
		}
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			usage("bad value for " + name)
		}
		return n
	}
	duration, err := strconv.ParseFloat(opts["--duration"], 64)
	if err != nil || duration <= 0 || duration > 3600 {
		usage("consume needs --duration between 0 and 3600 seconds")
	}
	r := &run{batch: num("--batch", 1), workers: num("--workers", 1),
		processMs: num("--process-ms", 0), slowEvery: num("--slow-every", 0),
		progressMs: num("--progress-ms", 1000), nakMod: num("--nak-seq-mod", 0),
		termMod: num("--term-seq-mod", 0), expiresMs: num("--expires-ms", 5000),
		maxMsgs: num("--max-msgs", 0)}
	r.slowMs = num("--slow-ms", r.processMs)
	_, r.inProgress = opts["--in-progress"]
	_, r.nakAll = opts["--nak"]
	_, r.noAck = opts["--no-ack"]
	if r.batch < 1 || r.workers < 1 || r.workers > 64 || r.progressMs < 10 || r.expiresMs < 10 {
		usage("bad --batch, --workers, --progress-ms or --expires-ms")
	}
	modes := 0
	for _, b := range []bool{r.nakAll, r.nakMod > 0, r.noAck} {
		if b {
			modes++
		}
	}
	if modes > 1 {
		usage("--nak, --nak-seq-mod and --no-ack exclude each other")
	}
	url := opts["--server"]
	if url == "" {
		url = "nats://127.0.0.1:4222"
	}
	nc, err := nats.Connect(url, nats.Name("nl-eval-go"))
	if err != nil {
		fmt.Fprintf(os.Stderr, "nl-consume-go: cannot connect to %s: %v\n", url, err)
		os.Exit(1)
	}
	defer nc.Close()
	js, err := nc.JetStream()
	if err != nil {
		fmt.Fprintf(os.Stderr, "nl-consume-go: %v\n", err)
		os.Exit(1)
	}
	start := time.Now()
	r.deadline = start.Add(time.Duration(duration * float64(time.Second)))
	var wg sync.WaitGroup
	for i := int64(0); i < r.workers; i++ {
		wg.Add(1)
		go r.worker(js, pos[1], pos[2], &wg)
	}
	wg.Wait()
	nc.Flush()
	out, _ := json.Marshal(map[string]interface{}{
		"mode": "pull", "workers": r.workers, "elapsed_ms": time.Since(start).Milliseconds(),
		"received": r.received, "redelivered_seen": r.redeliveredSeen, "acked": r.acked,
		"naked": r.naked, "termed": r.termed, "in_progress_sent": r.inProgressSent,
		"abandoned": r.abandoned, "max_delivery_count": r.maxDelivered,
		"status_msgs": r.statusMsgs, "pull_requests": r.pullRequests})
	fmt.Println(string(out))
}
