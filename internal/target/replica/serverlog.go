package replica

import (
	"io"
	"os"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/pgarena/pgarena/internal/lazy"
)

// logTail follows a server's log for the server's own words about why a
// replica does not follow: the errors it logs.
type logTail struct {
	path string
	mu   sync.Mutex
	from int64    // read up to here
	seen []logged // errors read within keepErrors
}

type logged struct {
	at   time.Time // when pgarena read it
	line string
}

// keepErrors is how long an error read from the log is still reported: a
// server retrying (a subscriber's worker, a walsender) logs it again
// within a few seconds.
const keepErrors = 15 * time.Second

// tailFromNow starts following the log at its current end (nil when path
// is "" or the log cannot be read).
func tailFromNow(path string) *logTail {
	if path == "" {
		return nil
	}
	fi, err := os.Stat(path)
	if err != nil {
		return nil
	}
	return &logTail{path: path, from: fi.Size()}
}

// tailWindow bounds how much of the log is read at a time (its end).
const tailWindow = 256 << 10

// errorLine matches a logged error: its severity and message, without the
// line's prefix (time, process).
var errorLine = lazy.Value[*regexp.Regexp]{New: func() *regexp.Regexp { return regexp.MustCompile(`(?m)\b(?:ERROR|FATAL|PANIC):\s+.*$`) }}

// errors returns the errors logged recently (read within keepErrors),
// oldest first, as "ERROR: message".
func (l *logTail) errors() []string {
	if l == nil {
		return nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	now := time.Now()
	for _, line := range errorLine.Get().FindAllString(l.read(), -1) {
		l.seen = append(l.seen, logged{at: now, line: strings.TrimSpace(line)})
	}
	i := 0
	for i < len(l.seen) && now.Sub(l.seen[i].at) > keepErrors {
		i++
	}
	l.seen = l.seen[i:]
	out := make([]string, len(l.seen))
	for i, e := range l.seen {
		out[i] = e.line
	}
	return out
}

// read returns what was logged since the last read (its last tailWindow).
func (l *logTail) read() string {
	f, err := os.Open(l.path)
	if err != nil {
		return ""
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return ""
	}
	end := fi.Size()
	if end < l.from { // rotated or truncated
		l.from = 0
	}
	from := max(l.from, end-tailWindow)
	b, err := io.ReadAll(io.NewSectionReader(f, from, end-from))
	if err != nil {
		return ""
	}
	// Keep a partly written last line for the next read.
	if i := strings.LastIndexByte(string(b), '\n'); i >= 0 {
		b = b[:i+1]
	} else {
		b = nil
	}
	l.from = from + int64(len(b))
	return string(b)
}

// lastError is the last error logged recently ("" when none).
func (l *logTail) lastError() string {
	errs := l.errors()
	if len(errs) == 0 {
		return ""
	}
	return errs[len(errs)-1]
}

// find returns the last recent error matching re (its submatches).
func (l *logTail) find(re *regexp.Regexp) []string {
	errs := l.errors()
	for i := len(errs) - 1; i >= 0; i-- {
		if m := re.FindStringSubmatch(errs[i]); m != nil {
			return m
		}
	}
	return nil
}
