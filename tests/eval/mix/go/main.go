// Command nl-mix-go runs one healthy JetStream pattern of the production
// mix (tests/eval/mix.py) with the nats.go client (Debian
// golang-github-nats-io-go-nats-dev) for --duration seconds, then prints
// one summary line of counts. The patterns use what only a client library
// offers:
//
//	kv       a key-value bucket written at --rate and watched (WatchAll)
//	obj      an object store: an object put every 10 s, read back, the
//	         previous one deleted
//	ordered  an ordered consumer reading --subject
//	pushfc   a durable push consumer (--name) with flow control and idle
//	         heartbeats, acking each message
//	dup      a publisher sending each message twice with the same
//	         Nats-Msg-Id (the stream's duplicate window drops the second)
//	eph      ephemeral pull consumers created, read from and removed one
//	         after another
//
// usage: nl-mix-go --server URL --duration S --pattern P [--bucket B]
// [--stream S] [--subject SUBJ] [--rate PER_SEC] [--name CONSUMER]
// Exit status 0, 1 on a connection or API error, 2 on a usage error.
package main

import (
	"flag"
	"fmt"
	"os"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"
)

type opts struct {
	server, pattern, bucket, stream, subject, name string
	duration, rate                                 float64
}

// counts are what the summary line reports.
type counts struct {
	written, read, errors int64
}

func fail(code int, format string, a ...interface{}) {
	fmt.Fprintf(os.Stderr, "nl-mix-go: "+format+"\n", a...)
	os.Exit(code)
}

// every calls fn at rate per second until deadline.
func every(rate float64, deadline time.Time, fn func(i int64)) {
	if rate <= 0 {
		rate = 1
	}
	tick := time.NewTicker(time.Duration(float64(time.Second) / rate))
	defer tick.Stop()
	for i := int64(0); time.Now().Before(deadline); i++ {
		fn(i)
		<-tick.C
	}
}

func runKV(js nats.JetStreamContext, o opts, end time.Time, c *counts) error {
	kv, err := js.KeyValue(o.bucket)
	if err == nats.ErrBucketNotFound {
		kv, err = js.CreateKeyValue(&nats.KeyValueConfig{Bucket: o.bucket, History: 5})
	}
	if err != nil {
		return err
	}
	w, err := kv.WatchAll()
	if err != nil {
		return err
	}
	defer w.Stop()
	go func() {
		for range w.Updates() {
			atomic.AddInt64(&c.read, 1)
		}
	}()
	every(o.rate, end, func(i int64) {
		key := "k" + strconv.FormatInt(i%50, 10)
		if _, err := kv.Put(key, []byte(strconv.FormatInt(i, 10))); err != nil {
			atomic.AddInt64(&c.errors, 1)
		} else {
			atomic.AddInt64(&c.written, 1)
		}
	})
	return nil
}

func runObj(js nats.JetStreamContext, o opts, end time.Time, c *counts) error {
	obs, err := js.ObjectStore(o.bucket)
	if err == nats.ErrStreamNotFound || err == nats.ErrBucketNotFound {
		obs, err = js.CreateObjectStore(&nats.ObjectStoreConfig{Bucket: o.bucket})
	}
	if err != nil {
		return err
	}
	blob := make([]byte, 200*1024)
	prev := ""
	every(0.1, end, func(i int64) {
		name := "blob-" + strconv.FormatInt(time.Now().UnixNano(), 10)
		if _, err := obs.PutBytes(name, blob); err != nil {
			atomic.AddInt64(&c.errors, 1)
			return
		}
		c.written++
		if b, err := obs.GetBytes(name); err != nil || len(b) != len(blob) {
			atomic.AddInt64(&c.errors, 1)
		} else {
			c.read++
		}
		if prev != "" {
			obs.Delete(prev)
		}
		prev = name
	})
	return nil
}

func runOrdered(js nats.JetStreamContext, o opts, end time.Time, c *counts) error {
	sub, err := js.Subscribe(o.subject, func(m *nats.Msg) {
		atomic.AddInt64(&c.read, 1)
	}, nats.OrderedConsumer(), nats.BindStream(o.stream))
	if err != nil {
		return err
	}
	time.Sleep(time.Until(end))
	return sub.Unsubscribe()
}

func runPushFC(js nats.JetStreamContext, o opts, end time.Time, c *counts) error {
	sub, err := js.Subscribe(o.subject, func(m *nats.Msg) {
		atomic.AddInt64(&c.read, 1)
		if m.Ack() != nil {
			atomic.AddInt64(&c.errors, 1)
		}
	}, nats.Durable(o.name), nats.BindStream(o.stream), nats.ManualAck(),
		nats.AckExplicit(), nats.EnableFlowControl(),
		nats.IdleHeartbeat(time.Second), nats.DeliverAll())
	if err != nil {
		return err
	}
	time.Sleep(time.Until(end))
	// Leaves the durable consumer in place for the next run.
	return sub.Drain()
}

func runDup(js nats.JetStreamContext, o opts, end time.Time, c *counts) error {
	every(o.rate, end, func(i int64) {
		id := strconv.FormatInt(time.Now().UnixNano(), 10)
		for k := 0; k < 2; k++ {
			if _, err := js.Publish(o.subject, []byte(id), nats.MsgId(id)); err != nil {
				atomic.AddInt64(&c.errors, 1)
			} else {
				atomic.AddInt64(&c.written, 1)
			}
		}
	})
	return nil
}

func runEph(js nats.JetStreamContext, o opts, end time.Time, c *counts) error {
	for time.Now().Before(end) {
		sub, err := js.PullSubscribe(o.subject, "", nats.BindStream(o.stream),
			nats.DeliverNew(), nats.InactiveThreshold(30*time.Second))
		if err != nil {
			atomic.AddInt64(&c.errors, 1)
			time.Sleep(time.Second)
			continue
		}
		c.written++ // One consumer made.
		msgs, _ := sub.Fetch(5, nats.MaxWait(time.Second))
		for _, m := range msgs {
			m.Ack()
			c.read++
		}
		sub.Unsubscribe()
		time.Sleep(time.Second)
	}
	return nil
}

func main() {
	var o opts
	flag.StringVar(&o.server, "server", "nats://127.0.0.1:4222", "server URL")
	flag.StringVar(&o.pattern, "pattern", "", "kv|obj|ordered|pushfc|dup|eph")
	flag.StringVar(&o.bucket, "bucket", "", "KV or object store bucket")
	flag.StringVar(&o.stream, "stream", "", "stream")
	flag.StringVar(&o.subject, "subject", "", "subject")
	flag.StringVar(&o.name, "name", "", "durable consumer name")
	flag.Float64Var(&o.duration, "duration", 0, "seconds to run")
	flag.Float64Var(&o.rate, "rate", 5, "writes per second")
	flag.Parse()
	if o.duration <= 0 || o.duration > 3600 {
		fail(2, "--duration must be between 0 and 3600 seconds")
	}
	runs := map[string]func(nats.JetStreamContext, opts, time.Time, *counts) error{
		"kv": runKV, "obj": runObj, "ordered": runOrdered,
		"pushfc": runPushFC, "dup": runDup, "eph": runEph,
	}
	run, ok := runs[o.pattern]
	if !ok {
		fail(2, "unknown --pattern %q", o.pattern)
	}
	nc, err := nats.Connect(o.server, nats.MaxReconnects(-1))
	if err != nil {
		fail(1, "connect: %v", err)
	}
	defer nc.Close()
	js, err := nc.JetStream()
	if err != nil {
		fail(1, "jetstream: %v", err)
	}
	var c counts
	end := time.Now().Add(time.Duration(o.duration * float64(time.Second)))
	if err := run(js, o, end, &c); err != nil {
		fail(1, "%s: %v", o.pattern, err)
	}
	fmt.Printf("pattern=%s written=%d read=%d errors=%d\n", o.pattern,
		atomic.LoadInt64(&c.written), atomic.LoadInt64(&c.read),
		atomic.LoadInt64(&c.errors))
}
