package sampler

import (
	"bytes"
	"io"
	"os"
	"regexp"
	"strings"
	"time"

	"github.com/pgarena/pgarena/internal/lazy"
	"github.com/pgarena/pgarena/internal/sampled"
	"github.com/pgarena/pgarena/internal/store"
)

// maxLogRead bounds what one tick reads of the server log.
const maxLogRead = 16 << 20

// logScanner counts the ERROR, FATAL and PANIC lines appended to a server
// log (stderr format) since it was opened, by level and by kind of message.
type logScanner struct {
	path    string
	f       *os.File
	off     int64
	partial []byte
	note    string
	// kinds seen so far: reported in every later sample (0 when none), so
	// their series are continuous.
	seen   []string
	totals map[string]float64 // "error", "fatal", "panic" and kinds, over the run
}

func newLogScanner(path string) *logScanner {
	l := &logScanner{path: path, totals: map[string]float64{}}
	f, err := os.Open(path)
	if err != nil {
		l.note = "server_log: cannot read " + path + ": " + errText(err) + ", skipped"
		return l
	}
	if l.off, err = f.Seek(0, io.SeekEnd); err != nil {
		f.Close()
		l.note = "server_log: " + errText(err) + ", skipped"
		return l
	}
	l.f = f
	return l
}

func errText(err error) string {
	if pe, ok := err.(*os.PathError); ok {
		return pe.Err.Error()
	}
	return err.Error()
}

func (l *logScanner) close() {
	if l.f != nil {
		l.f.Close()
		l.f = nil
	}
}

// logLevel finds the level of a log line: "... [pid] ERROR:  message".
var logLevel = lazy.Value[*regexp.Regexp]{New: func() *regexp.Regexp { return regexp.MustCompile(`\b(ERROR|FATAL|PANIC):\s+(.*)$`) }}

// logKinds classify messages by a piece of their text, first match wins.
var logKinds = []struct{ kind, text string }{
	{"deadlock", "deadlock detected"},
	{"too_many_clients", "too many clients"},
	{"too_many_clients", "remaining connection slots are reserved"},
	{"terminating_connection", "terminating connection"},
	{"could_not_write", "could not write"},
	{"could_not_write", "could not extend"},
	{"could_not_write", "No space left on device"},
	{"serialization", "could not serialize access"},
	{"statement_timeout", "canceling statement due to statement timeout"},
	{"out_of_memory", "out of memory"},
	{"constraint", "violates"},
}

// logKind classifies one message.
func logKind(msg string) string {
	for _, k := range logKinds {
		if strings.Contains(msg, k.text) {
			return k.kind
		}
	}
	return "other"
}

// sample reads what was appended since the last call and counts it.
func (l *logScanner) sample(now time.Time) []store.Sample {
	if l.note != "" {
		n := l.note
		l.note = ""
		return []store.Sample{noteSample(now, "server_log", n, store.SeverityInfo)}
	}
	if l.f == nil {
		return nil
	}
	if fi, err := l.f.Stat(); err == nil && fi.Size() < l.off {
		l.off, l.partial = 0, nil // truncated or replaced: start over
	}
	buf := make([]byte, 64<<10)
	counts := map[string]float64{"error": 0, "fatal": 0, "panic": 0}
	for read := 0; read < maxLogRead; {
		n, err := l.f.ReadAt(buf, l.off)
		l.off += int64(n)
		read += n
		data := append(l.partial, buf[:n]...)
		for {
			i := bytes.IndexByte(data, '\n')
			if i < 0 {
				break
			}
			l.count(data[:i], counts)
			data = data[i+1:]
		}
		l.partial = append(l.partial[:0:0], data...)
		if len(l.partial) > 64<<10 {
			l.partial = l.partial[:0] // a line this long is not a log message worth counting
		}
		if err != nil || n < len(buf) {
			break
		}
	}
	vals := make(map[string]float64, len(counts)+len(l.seen))
	for _, k := range l.seen {
		vals[sampled.Log+k] = 0
	}
	for k, v := range counts {
		vals[sampled.Log+k] = v
		l.totals[k] += v
	}
	return []store.Sample{{Time: now, Source: "server_log", Values: vals}}
}

func (l *logScanner) count(line []byte, counts map[string]float64) {
	m := logLevel.Get().FindSubmatch(line)
	if m == nil {
		return
	}
	counts[strings.ToLower(string(m[1]))]++
	kind := logKind(string(m[2]))
	if _, ok := counts[kind]; !ok {
		counts[kind] = 0
		if !containsString(l.seen, kind) {
			l.seen = append(l.seen, kind)
		}
	}
	counts[kind]++
}

func containsString(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}
