// Command nl-consume-go is the Go fault injector: a JetStream pull or push
// consumer written with the nats.go client (Debian
// golang-github-nats-io-go-nats-dev).
//
// Same command line and summary line as `nl-inject consume` for the options
// the evaluation scenarios use:
//
//	nl-consume-go [--server URL] consume STREAM CONSUMER --duration S
//	    [--mode pull|push] [--deliver-subject SUBJ] [--queue G]
//	    [--batch B] [--workers W] [--process-ms P]
//	    [--process-dist fixed|lognormal] [--process-sigma S] [--seed N]
//	    [--slow-every K --slow-ms P2] [--stagger-ms MS]
//	    [--in-progress [--progress-ms MS]] [--nak | --nak-seq-mod K | --no-ack]
//	    [--term-seq-mod K] [--max-msgs N] [--expires-ms MS] [--verbose]
//
// Pull mode: each worker binds its own pull subscription to the durable
// consumer (nats.Bind) and fetches with Fetch(batch, MaxWait). Push mode:
// one core subscription (nc.Subscribe or nc.QueueSubscribe, no pending
// limits) to the deliver subject (--deliver-subject, else the consumer's;
// --queue, else its deliver group) appends to an unbounded in-order
// buffer, from which the W workers take messages in turn; flow-control
// requests are answered, heartbeats counted (both as status_msgs); --batch
// and --expires-ms are ignored. Either way a worker models the processing
// time and answers with Ack, Nak, InProgress or Term.
//
// Processing time: --process-ms P each (fixed, the default), or with
// --process-dist lognormal P x exp(S x z) ms, z standard normal (S is
// --process-sigma, default 0.5), capped at 20 x P; each worker draws from
// its own generator seeded from --seed (default 1) and its index, the same
// generator as the C, JavaScript and Python injectors. --slow-every/--slow-ms
// override it for those messages. Worker i (from 0) starts i x --stagger-ms
// late. --verbose logs each event to stderr.
//
// Exit status 0, 1 on a connection error, 2 on a usage error.
package main

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"
)

var flags = map[string]bool{"--in-progress": true, "--nak": true, "--no-ack": true, "--verbose": true}
var valued = map[string]bool{"--server": true, "--duration": true, "--batch": true, "--workers": true,
	"--process-ms": true, "--slow-every": true, "--slow-ms": true, "--progress-ms": true,
	"--nak-seq-mod": true, "--term-seq-mod": true, "--expires-ms": true, "--mode": true, "--max-msgs": true,
	"--process-dist": true, "--process-sigma": true, "--seed": true, "--stagger-ms": true,
	"--deliver-subject": true, "--queue": true}

func usage(msg string) {
	fmt.Fprintf(os.Stderr, "nl-consume-go: %s\nusage: nl-consume-go [--server URL] consume STREAM CONSUMER --duration S [options]\n", msg)
	os.Exit(2)
}

// run holds the settings and shared counters of one consume run.
type run struct {
	batch, workers, processMs, slowEvery, slowMs, progressMs int64
	nakMod, termMod, expiresMs, maxMsgs                      int64
	inProgress, nakAll, noAck, verbose, lognormal            bool
	sigma                                                    float64
	seed                                                     uint64
	staggerMs                                                int64
	nc                                                       *nats.Conn
	start, deadline                                          time.Time
	received, redeliveredSeen, acked, naked, termed          int64
	inProgressSent, abandoned, maxDelivered, statusMsgs      int64
	pullRequests, taken                                      int64
	stop                                                     atomic.Bool
}

// The processing-time generator, the same in the C, JavaScript and Python
// injectors so that a seed gives the same times in all four: splitmix64,
// and Marsaglia's polar method.
const gamma = 0x9E3779B97F4A7C15

type rng struct{ state uint64 }

func mix64(z uint64) uint64 {
	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9
	z = (z ^ (z >> 27)) * 0x94D049BB133111EB
	return z ^ (z >> 31)
}

// newRng seeds worker's generator from --seed.
func newRng(seed uint64, worker int) *rng {
	return &rng{state: mix64(seed ^ mix64(uint64(worker+1)*gamma))}
}

// uniform returns a float64 in [0, 1).
func (g *rng) uniform() float64 {
	g.state += gamma
	return float64(mix64(g.state)>>11) * (1.0 / 9007199254740992.0)
}

// normal returns a standard normal draw (polar method).
func (g *rng) normal() float64 {
	for {
		v1 := float64(2*g.uniform()) - 1
		v2 := float64(2*g.uniform()) - 1
		s := float64(v1*v1) + float64(v2*v2)
		if s > 0 && s < 1 {
			return v1 * math.Sqrt(-2*math.Log(s)/s)
		}
	}
}

// workMs is the next message's processing time: --process-ms, or with
// lognormal P x exp(S x z) capped at 20 x P, to the millisecond.
func (r *run) workMs(g *rng) int64 {
	if !r.lognormal {
		return r.processMs
	}
	p := float64(r.processMs)
	t := p * math.Exp(r.sigma*g.normal())
	if t > 20*p {
		t = 20 * p
	}
	if t <= 0 {
		return 0
	}
	return int64(float64(t) + 0.5)
}

// vlog logs one per-message event to stderr when --verbose is set.
func (r *run) vlog(worker int, md *nats.MsgMetadata, what string) {
	if r.verbose {
		fmt.Fprintf(os.Stderr, "t=%.3f w=%d sseq=%d cseq=%d dc=%d %s\n",
			time.Since(r.start).Seconds(), worker, md.Sequence.Stream,
			md.Sequence.Consumer, md.NumDelivered, what)
	}
}

// staggerWait waits until this worker's start, worker x --stagger-ms after
// the run's (or the deadline or a stop, if sooner).
func (r *run) staggerWait(worker int) {
	if r.staggerMs <= 0 {
		return
	}
	start := r.start.Add(time.Duration(int64(worker)*r.staggerMs) * time.Millisecond)
	for !r.stop.Load() {
		now := time.Now()
		until := start
		if r.deadline.Before(until) {
			until = r.deadline
		}
		if !now.Before(until) {
			break
		}
		step := until.Sub(now)
		if step > 50*time.Millisecond {
			step = 50 * time.Millisecond
		}
		time.Sleep(step)
	}
	if r.verbose {
		fmt.Fprintf(os.Stderr, "t=%.3f w=%d start\n", time.Since(r.start).Seconds(), worker)
	}
}

// handle processes one message: waits the modelled time (sending +WPI when
// asked), then acks, NAKs, terms or leaves it. It returns false when the
// deadline cut the processing short.
func (r *run) handle(m *nats.Msg, worker int, g *rng) bool {
	md, err := m.Metadata()
	if err != nil {
		// Status messages: heartbeats, flow control, pull errors. A flow
		// control request (100 with a reply subject) wants an empty
		// message back; nats.go answers it only on its own JetStream
		// subscriptions, not on the core one push mode uses.
		atomic.AddInt64(&r.statusMsgs, 1)
		if m.Header.Get("Status") == "100" && m.Reply != "" {
			r.nc.Publish(m.Reply, nil)
		}
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
	// Drawn for every delivery, so the slow ones do not shift the series.
	work := r.workMs(g)
	if r.lognormal {
		r.vlog(worker, md, fmt.Sprintf("recv work=%d", work))
	} else {
		r.vlog(worker, md, "recv")
	}
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
			r.vlog(worker, md, "abandoned")
			return false
		}
		if r.inProgress && !now.Before(nextWpi) {
			m.InProgress()
			atomic.AddInt64(&r.inProgressSent, 1)
			r.vlog(worker, md, "wpi")
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
		r.vlog(worker, md, "term")
	case r.nakAll || (r.nakMod > 0 && sseq%r.nakMod == 0):
		m.Nak()
		atomic.AddInt64(&r.naked, 1)
		r.vlog(worker, md, "nak")
	case !r.noAck:
		m.Ack()
		atomic.AddInt64(&r.acked, 1)
		r.vlog(worker, md, "ack")
	default:
		r.vlog(worker, md, "no-ack")
	}
	return true
}

// buffer is push mode's client-side pending buffer: an unbounded in-order
// queue that the subscription callback fills and the workers drain.
type buffer struct {
	mu     sync.Mutex
	cond   *sync.Cond
	msgs   []*nats.Msg
	closed bool
}

func newBuffer() *buffer {
	b := &buffer{}
	b.cond = sync.NewCond(&b.mu)
	return b
}

func (b *buffer) put(m *nats.Msg) {
	b.mu.Lock()
	b.msgs = append(b.msgs, m)
	b.mu.Unlock()
	b.cond.Signal()
}

// take returns the oldest message, waiting for one; nil once closed.
func (b *buffer) take() *nats.Msg {
	b.mu.Lock()
	defer b.mu.Unlock()
	for len(b.msgs) == 0 && !b.closed {
		b.cond.Wait()
	}
	if b.closed {
		return nil
	}
	m := b.msgs[0]
	b.msgs[0] = nil
	b.msgs = b.msgs[1:]
	return m
}

func (b *buffer) close() {
	b.mu.Lock()
	b.closed = true
	b.mu.Unlock()
	b.cond.Broadcast()
}

// pushWorker takes messages from the shared buffer, in order, and handles
// them until the deadline.
func (r *run) pushWorker(buf *buffer, id int, wg *sync.WaitGroup) {
	defer wg.Done()
	g := newRng(r.seed, id)
	r.staggerWait(id)
	for !r.stop.Load() && time.Now().Before(r.deadline) {
		m := buf.take()
		if m == nil {
			return
		}
		if strings.HasPrefix(m.Reply, "$JS.ACK.") && r.maxMsgs > 0 &&
			atomic.AddInt64(&r.taken, 1) > r.maxMsgs {
			r.stop.Store(true)
			buf.close()
			return
		}
		r.handle(m, id, g)
	}
}

// worker fetches and handles messages on its own bound pull subscription
// until the deadline.
func (r *run) worker(js nats.JetStreamContext, stream, consumer string, id int, wg *sync.WaitGroup) {
	defer wg.Done()
	g := newRng(r.seed, id)
	sub, err := js.PullSubscribe("", consumer, nats.Bind(stream, consumer))
	if err != nil {
		fmt.Fprintf(os.Stderr, "nl-consume-go: bind %s.%s: %v\n", stream, consumer, err)
		os.Exit(1)
	}
	defer sub.Unsubscribe()
	r.staggerWait(id)
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
			if !r.handle(m, id, g) {
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
	mode := "pull"
	if m, ok := opts["--mode"]; ok {
		mode = m
	}
	if mode != "pull" && mode != "push" {
		usage("--mode must be pull or push")
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
	_, r.verbose = opts["--verbose"]
	switch opts["--process-dist"] {
	case "", "fixed":
	case "lognormal":
		r.lognormal = true
	default:
		usage("--process-dist must be fixed or lognormal")
	}
	r.sigma = 0.5
	if v, ok := opts["--process-sigma"]; ok {
		f, err := strconv.ParseFloat(v, 64)
		if err != nil || !(f >= 0 && f <= 10) {
			usage("--process-sigma must lie in [0, 10]")
		}
		r.sigma = f
	}
	r.seed = uint64(num("--seed", 1))
	r.staggerMs = num("--stagger-ms", 0)
	if r.staggerMs < 0 || r.staggerMs > 3600000 {
		usage("--stagger-ms must lie in [0, 3600000]")
	}
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
	r.nc = nc
	js, err := nc.JetStream()
	if err != nil {
		fmt.Fprintf(os.Stderr, "nl-consume-go: %v\n", err)
		os.Exit(1)
	}
	var buf *buffer
	var psub *nats.Subscription
	if mode == "push" {
		// The deliver subject and queue group: given, or the consumer's.
		deliver, dok := opts["--deliver-subject"]
		queue, qok := opts["--queue"]
		if !dok || !qok {
			ci, err := js.ConsumerInfo(pos[1], pos[2])
			if err != nil {
				fmt.Fprintf(os.Stderr, "nl-consume-go: %s.%s: %v\n", pos[1], pos[2], err)
				os.Exit(1)
			}
			if !dok {
				deliver = ci.Config.DeliverSubject
			}
			if !qok {
				queue = ci.Config.DeliverGroup
			}
			if deliver == "" {
				usage(fmt.Sprintf("consumer %s.%s is a pull consumer; use --mode pull", pos[1], pos[2]))
			}
		}
		buf = newBuffer()
		if queue != "" {
			psub, err = nc.QueueSubscribe(deliver, queue, buf.put)
		} else {
			psub, err = nc.Subscribe(deliver, buf.put)
		}
		if err == nil {
			err = psub.SetPendingLimits(-1, -1)
		}
		if err != nil {
			fmt.Fprintf(os.Stderr, "nl-consume-go: cannot subscribe to %s: %v\n", deliver, err)
			os.Exit(1)
		}
	}
	start := time.Now()
	r.start = start
	r.deadline = start.Add(time.Duration(duration * float64(time.Second)))
	var wg sync.WaitGroup
	for i := int64(0); i < r.workers; i++ {
		wg.Add(1)
		if buf != nil {
			go r.pushWorker(buf, int(i), &wg)
		} else {
			go r.worker(js, pos[1], pos[2], int(i), &wg)
		}
	}
	if buf != nil {
		stopAt := time.AfterFunc(time.Until(r.deadline), buf.close)
		defer stopAt.Stop()
	}
	wg.Wait()
	if psub != nil {
		psub.Unsubscribe()
	}
	nc.Flush()
	out, _ := json.Marshal(map[string]interface{}{
		"mode": mode, "workers": r.workers, "elapsed_ms": time.Since(start).Milliseconds(),
		"received": r.received, "redelivered_seen": r.redeliveredSeen, "acked": r.acked,
		"naked": r.naked, "termed": r.termed, "in_progress_sent": r.inProgressSent,
		"abandoned": r.abandoned, "max_delivery_count": r.maxDelivered,
		"status_msgs": r.statusMsgs, "pull_requests": r.pullRequests})
	fmt.Println(string(out))
}
