package sampler

import (
	"math/big"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgtype"

	"github.com/pgarena/pgarena/internal/store"
)

// haproxy 2.6's show stat, abridged to its first columns plus a few more:
// parsing goes by the header's names.
const haproxyStat = `# pxname,svname,qcur,qmax,scur,smax,slim,stot,bin,bout,dreq,dresp,ereq,econ,eresp,wretr,wredis,status
postgres,FRONTEND,,,8,8,40,120,0,0,0,0,1,,,,,OPEN
postgres,postgres,3,5,8,8,40,120,0,0,,0,,2,0,1,0,UP
postgres,BACKEND,3,5,8,8,4,120,0,0,0,0,,2,0,1,0,UP

`

func TestParseHaproxyStat(t *testing.T) {
	vals, counters, err := parseHaproxyStat(strings.NewReader(haproxyStat))
	if err != nil {
		t.Fatal(err)
	}
	if vals["pooler.scur"] != 8 || vals["pooler.qcur"] != 3 {
		t.Errorf("values %v", vals)
	}
	if counters["stot"] != 120 || counters["retries"] != 1 || counters["errors"] != 3 {
		t.Errorf("counters %v", counters)
	}
}

// TestPoolerRates: counters become rates and mean times between samples;
// a counter that goes back (a restarted pooler) gives no rate.
func TestPoolerRates(t *testing.T) {
	s := &poolerSource{every: time.Second}
	t0 := time.Unix(1000, 0)
	s.rates(t0, map[string]float64{}, map[string]float64{"total_xact_count": 100, "total_xact_time": 1e6, "total_wait_time": 0})
	v := map[string]float64{}
	s.rates(t0.Add(2*time.Second), v, map[string]float64{"total_xact_count": 300, "total_xact_time": 3e6, "total_wait_time": 4e6})
	if v["pooler.xact_per_s"] != 100 || v["pooler.xact_time_ms"] != 10 || v["pooler.wait_s_per_s"] != 2 {
		t.Errorf("rates %v", v)
	}
	v = map[string]float64{}
	s.rates(t0.Add(3*time.Second), v, map[string]float64{"total_xact_count": 5})
	if len(v) != 0 {
		t.Errorf("rates after a restart: %v", v)
	}
}

// TestPoolerQueueFinding: clients waiting in samples make one finding,
// a warning once a client waited a second or more.
func TestPoolerQueueFinding(t *testing.T) {
	s := &poolerSource{every: time.Second}
	if fs := s.findings(); len(fs) != 0 {
		t.Fatalf("findings without waiting: %v", fs)
	}
	t0 := time.Unix(1000, 0)
	for i, w := range []float64{0, 6, 5, 0} {
		s.watch(t0.Add(time.Duration(i)*time.Second), map[string]float64{"pooler.cl_waiting": w, "pooler.maxwait_s": 0.25 * w})
	}
	fs := s.findings()
	if len(fs) != 1 || fs[0].Severity != store.SeverityWarning || fs[0].Kind != "pooler_queue" ||
		!strings.Contains(fs[0].Message, "clients queued in the pooler for about 2s (up to 6 at once, maxwait 1.5 s)") {
		t.Errorf("findings %+v", fs)
	}
}

// TestRowNum: console columns come as integers, numerics or text.
func TestRowNum(t *testing.T) {
	r := row{"a": int64(3), "b": pgtype.Numeric{Int: big.NewInt(42), Valid: true}, "c": "7", "d": "x", "e": nil}
	for k, want := range map[string]float64{"a": 3, "b": 42, "c": 7} {
		if v, ok := r.num(k); !ok || v != want {
			t.Errorf("%s: %v %v", k, v, ok)
		}
	}
	for _, k := range []string{"d", "e", "missing"} {
		if _, ok := r.num(k); ok {
			t.Errorf("%s should not be a number", k)
		}
	}
}
