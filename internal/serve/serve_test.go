package serve

import (
	"bufio"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pgarena/pgarena/internal/store"
)

func TestList(t *testing.T) {
	st, ids := fixtures(t)
	ts := newTestServer(t, st, Options{})
	code, body := get(t, ts.URL+"/")
	if code != http.StatusOK {
		t.Fatalf("list: %d %s", code, body)
	}
	for _, id := range ids {
		mustContain(t, "list", body, `href="/run/`+id+`"`)
	}
	mustContain(t, "list", body, "pool-a", "interrupted", "complete", "postgres://bench@db1/bench",
		"&lt;script&gt;alert(1)&lt;/script&gt;")
	if strings.Contains(body, "<script>alert(1)") {
		t.Error("the XSS label is not escaped")
	}
	_, body = get(t, ts.URL+"/?label=pool-*&sort=tps&order=asc")
	if n := strings.Count(body, `<td class="label">pool-`); n != 6 {
		t.Errorf("label filter pool-*: %d rows, want 6", n)
	}
	if a, b := strings.Index(body, ids[2]), strings.Index(body, ids[4]); a < 0 || b < 0 || a > b {
		t.Errorf("sort by tps ascending: %s (slower) should come before %s", ids[2], ids[4])
	}
	_, body = get(t, ts.URL+"/?since=2099-01-01")
	mustContain(t, "since", body, "no runs")
	_, body = get(t, ts.URL+"/?since=yesterday")
	mustContain(t, "bad since", body, "since: give a duration")
}

func TestPlansGroupedAndStatus(t *testing.T) {
	dir := t.TempDir()
	for rep := 1; rep <= 2; rep++ {
		l := startLiveRun(t, dir, store.RunSpec{Label: "cell", PlanTag: store.PlanTag{Plan: "pools", Cell: "c1", CellName: "local/tpcb/clients=4", Repeat: rep}})
		l.tick(t)
		if rep == 1 {
			l.finish(t)
		}
	}
	ts := newTestServer(t, store.OpenReadOnly(dir), Options{})
	_, body := get(t, ts.URL+"/")
	mustContain(t, "list", body, `plan pools`, `href="/plan/pools"`, "cell local/tpcb/clients=4, repeat 2")
	code, body := get(t, ts.URL+"/plan/pools")
	if code != http.StatusOK {
		t.Fatalf("plan: %d %s", code, body)
	}
	mustContain(t, "plan", body, "done 1 · running 1 · failed 0 · pending 0", "ETA")
	if code, _ := get(t, ts.URL+"/plan/nope"); code != http.StatusNotFound {
		t.Errorf("unknown plan: %d, want 404", code)
	}
}

func TestToken(t *testing.T) {
	st, _ := fixtures(t)
	ts := newTestServer(t, st, Options{Token: "s3cret"})
	for _, p := range []string{"/", "/run/last", "/compare?run=last", "/download/csv?run=last", "/?token=wrong"} {
		if code, _ := get(t, ts.URL+p); code != http.StatusUnauthorized {
			t.Errorf("%s without the token: %d, want 401", p, code)
		}
	}
	// The token in the URL sets a cookie that later requests carry.
	jar := &cookieJar{}
	c := &http.Client{Jar: jar}
	resp, err := c.Get(ts.URL + "/?token=s3cret")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("with the token: %d", resp.StatusCode)
	}
	if resp, err = c.Get(ts.URL + "/run/last"); err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("with the cookie: %d", resp.StatusCode)
	}
	req, _ := http.NewRequest("GET", ts.URL+"/", nil)
	req.Header.Set("Authorization", "Bearer s3cret")
	if resp, err = http.DefaultClient.Do(req); err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("with a bearer token: %d", resp.StatusCode)
	}
	for addr, want := range map[string]bool{"127.0.0.1:8080": true, "localhost:1": true, "[::1]:80": true,
		"0.0.0.0:8080": false, ":8080": false, "10.1.2.3:8080": false, "example.com:80": false, "nonsense": false} {
		if got := IsLoopback(addr); got != want {
			t.Errorf("IsLoopback(%q) = %v", addr, got)
		}
	}
}

// TestHostWithoutToken: without a token only loopback Host headers are
// answered (DNS rebinding: a page of evil.example resolving to 127.0.0.1
// sends Host: evil.example); with a token any host name is.
func TestHostWithoutToken(t *testing.T) {
	st, _ := fixtures(t)
	ts := newTestServer(t, st, Options{})
	_, port, _ := net.SplitHostPort(strings.TrimPrefix(ts.URL, "http://"))
	for host, want := range map[string]int{"127.0.0.1:" + port: 200, "localhost:" + port: 200, "LOCALHOST": 200,
		"[::1]:" + port: 200, "127.0.0.2": 200, "evil.example:" + port: 421, "evil.example": 421,
		"localhost.evil.example": 421, "10.0.0.1:" + port: 421} {
		req, _ := http.NewRequest("GET", ts.URL+"/", nil)
		req.Host = host
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != want {
			t.Errorf("Host %q: %d, want %d", host, resp.StatusCode, want)
		}
	}
	tok := newTestServer(t, st, Options{Token: "s3cret"})
	req, _ := http.NewRequest("GET", tok.URL+"/?token=s3cret", nil)
	req.Host = "bench.example:8080"
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Errorf("with a token, Host bench.example: %d, want 200", resp.StatusCode)
	}
}

func TestCompareAndDownloads(t *testing.T) {
	st, ids := fixtures(t)
	ts := newTestServer(t, st, Options{})
	q := "run=" + ids[0] + "&run=" + ids[3] + "&run=" + ids[8]
	code, body := get(t, ts.URL+"/compare?"+q)
	if code != http.StatusOK {
		t.Fatalf("compare: %d %s", code, body)
	}
	mustContain(t, "compare", body, `id="compare-text"`, "95% CI", `id="comparison-table"`, "&lt;script&gt;alert(1)")
	if strings.Contains(body, "<script>alert(1)") {
		t.Error("compare: the XSS label is not escaped")
	}
	for format, want := range map[string]string{"csv": "run_id", "json": `"histograms"`, "html": "<!DOCTYPE html>"} {
		code, body := get(t, ts.URL+"/download/"+format+"?"+q)
		if code != http.StatusOK || !strings.Contains(body, want) {
			t.Errorf("download %s: %d, %q missing", format, code, want)
		}
	}
	if code, _ := get(t, ts.URL+"/compare?run=nope"); code != http.StatusNotFound {
		t.Errorf("compare of an unknown run: %d, want 404", code)
	}
}

// eventStream follows the server-sent events of a run.
type eventStream struct {
	got  chan string
	seen []string
}

func followEvents(t *testing.T, url string) *eventStream {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	s := &eventStream{got: make(chan string, 100)}
	go func() {
		sc := bufio.NewScanner(resp.Body)
		for sc.Scan() {
			if ev, ok := strings.CutPrefix(sc.Text(), "event: "); ok {
				s.got <- ev
			}
		}
		close(s.got)
	}()
	return s
}

// next returns the next event within d: "" if none came, ok false if the
// stream ended.
func (s *eventStream) next(d time.Duration) (ev string, ok bool) {
	select {
	case ev, ok = <-s.got:
		if ok {
			s.seen = append(s.seen, ev)
		}
		return ev, ok
	case <-time.After(d):
		return "", true
	}
}

// events reads server-sent events of a run until want arrives, calling
// during after the first; it returns the event names seen. The stream
// ending or 10 s without want fail the test.
func events(t *testing.T, url string, want string, during func()) []string {
	t.Helper()
	s := followEvents(t, url)
	deadline := time.Now().Add(10 * time.Second)
	for first := true; ; first = false {
		ev, ok := s.next(time.Until(deadline))
		switch {
		case !ok:
			return s.seen
		case ev == "":
			t.Fatalf("no %q event within 10 s; saw %v", want, s.seen)
		case first:
			during()
		}
		if ev == want {
			return s.seen
		}
	}
}

func TestLiveEvents(t *testing.T) {
	dir := t.TempDir()
	l := startLiveRun(t, dir, store.RunSpec{Label: "live"})
	l.tick(t)
	ts := newTestServer(t, store.OpenReadOnly(dir), Options{})
	_, body := get(t, ts.URL+"/run/"+l.w.ID())
	mustContain(t, "live page", body, `src="/static/live.js"`, "still running")
	s := followEvents(t, ts.URL+"/run/"+l.w.ID()+"/events")
	// The server reports changes after its first read of the run, which
	// an interval written at once may precede: write until it reports one.
	for deadline := time.Now().Add(10 * time.Second); ; {
		l.tick(t)
		if ev, ok := s.next(500 * time.Millisecond); ev == "update" {
			break
		} else if !ok || time.Now().After(deadline) {
			t.Fatalf("no update while the run grew; events %v", s.seen)
		}
	}
	l.finish(t)
	for deadline := time.Now().Add(10 * time.Second); ; {
		if ev, ok := s.next(time.Until(deadline)); ev == "end" {
			break
		} else if !ok || ev == "" {
			t.Fatalf("no end once the run finished; events %v", s.seen)
		}
	}
	_, body = get(t, ts.URL+"/run/"+l.w.ID())
	if strings.Contains(body, "live.js") {
		t.Error("a finished run's page still follows it")
	}
}

// TestHalfWrittenAndDeleted: a run directory with a torn interval line, one
// with a torn spec, and one deleted while a page follows it.
func TestHalfWrittenAndDeleted(t *testing.T) {
	dir := t.TempDir()
	torn := startLiveRun(t, dir, store.RunSpec{Label: "torn"})
	torn.tick(t)
	f, err := os.OpenFile(filepath.Join(torn.w.Dir(), store.IntervalsFile), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString(`{"seq":2,"start":"20`); err != nil {
		t.Fatal(err)
	}
	f.Close()
	bad := filepath.Join(dir, "20260101-000000-bad")
	if err := os.MkdirAll(bad, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(bad, store.SpecFile), []byte(`{"workload": "tp`), 0o644); err != nil {
		t.Fatal(err)
	}
	gone := startLiveRun(t, dir, store.RunSpec{Label: "gone"})
	gone.tick(t)

	ts := newTestServer(t, store.OpenReadOnly(dir), Options{})
	code, body := get(t, ts.URL+"/")
	if code != http.StatusOK {
		t.Fatalf("list: %d", code)
	}
	mustContain(t, "list", body, "corrupt", "torn", "gone")
	code, body = get(t, ts.URL+"/run/"+torn.w.ID())
	if code != http.StatusOK {
		t.Fatalf("torn run: %d %s", code, body)
	}
	mustContain(t, "torn run", body, "torn and is ignored")
	if code, body = get(t, ts.URL+"/run/20260101-000000-bad"); code != http.StatusInternalServerError || strings.Count(body, "\n") > 1 {
		t.Errorf("corrupt run: %d %q, want 500 and one line", code, body)
	}
	seen := events(t, ts.URL+"/run/"+gone.w.ID()+"/events", "gone", func() {
		if err := os.RemoveAll(gone.w.Dir()); err != nil {
			t.Error(err)
		}
	})
	if seen[len(seen)-1] != "gone" {
		t.Errorf("deleted run: events %v", seen)
	}
	if code, _ := get(t, ts.URL+"/run/"+gone.w.ID()); code != http.StatusNotFound {
		t.Errorf("deleted run page: %d, want 404", code)
	}
	if code, _ = get(t, ts.URL+"/"); code != http.StatusOK {
		t.Errorf("list after a deletion: %d", code)
	}
}

// cookieJar keeps cookies for one host, enough for the token test.
type cookieJar struct{ cookies []*http.Cookie }

func (j *cookieJar) SetCookies(_ *url.URL, cs []*http.Cookie) { j.cookies = append(j.cookies, cs...) }
func (j *cookieJar) Cookies(*url.URL) []*http.Cookie          { return j.cookies }
