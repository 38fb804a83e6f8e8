package metrics

import (
	"encoding/json"
	"slices"
	"strings"
	"unicode/utf8"
)

// MarshalJSON writes the summary with each figure of merit of the run also
// as a top-level number ("nopm": 12345), as HammerDB users expect, and the
// per-type stats of Tx keyed by type under "by_type", where a figure of one
// type ("rollbacks" of new_order) joins its type's numbers. The figures list
// keeps units and notes. by_type's objects have their keys sorted and their
// numbers written as encoding/json writes a float64 (they were once a
// round trip through map[string]any). TestSummaryJSON compares it with
// that encoding/json form.
func (s Summary) MarshalJSON() ([]byte, error) {
	w := JSONWriter{B: make([]byte, 0, 2048)}
	taken := s.writePlain(&w)
	if w.Err != nil {
		return nil, w.Err
	}
	if len(s.Figures) == 0 && len(s.Tx) == 0 {
		return w.B, nil
	}
	w.B = w.B[:len(w.B)-1] // reopen the object for the extra keys
	for _, f := range s.Figures {
		if f.Tx == "" && !slices.Contains(taken, f.Name) {
			taken = append(taken, f.Name)
			w.Key(f.Name)
			w.Float(f.Value)
		}
	}
	if !slices.Contains(taken, "by_type") {
		s.writeByType(&w)
	}
	w.Close()
	if w.Err != nil {
		return nil, w.Err
	}
	return w.B, nil
}

// writePlain writes the struct's own fields and returns their keys.
func (s *Summary) writePlain(w *JSONWriter) []string {
	keys := make([]string, 0, 48)
	key := func(k string) { keys = append(keys, k); w.Key(k) }
	w.Open()
	key("run_id")
	w.String(s.RunID)
	key("status")
	w.String(s.Status)
	if s.StopReason != "" {
		key("stop_reason")
		w.String(s.StopReason)
	}
	key("workload")
	w.String(s.Workload)
	if s.Label != "" {
		key("label")
		w.String(s.Label)
	}
	key("query_mode")
	w.String(s.QueryMode)
	key("clients")
	w.Int(int64(s.Clients))
	key("threads")
	w.Int(int64(s.Threads))
	if len(s.Params) > 0 {
		key("params")
		w.StringMap(s.Params)
	}
	if len(s.Topology) > 0 {
		key("topology")
		w.Strings(s.Topology)
	}
	if len(s.SessionSettings) > 0 {
		key("session_settings")
		w.Strings(s.SessionSettings)
	}
	key("start")
	w.Time(s.Start)
	key("end")
	w.Time(s.End)
	key("duration_s")
	w.Float(s.DurationS)
	if s.WarmupS != 0 {
		key("warmup_s")
		w.Float(s.WarmupS)
	}
	key("transactions")
	w.Int(s.Transactions)
	key("failed")
	w.Int(s.Failed)
	if s.Unfinished != 0 {
		key("unfinished")
		w.Int(s.Unfinished)
	}
	if s.Drain != nil {
		key("drain")
		w.Value(s.Drain)
	}
	key("errors")
	w.Errors(&s.Errors)
	if len(s.ErrorAdvice) > 0 {
		key("error_advice")
		w.StringMap(s.ErrorAdvice)
	}
	key("retries")
	w.Int(s.Retries)
	for _, f := range []struct {
		k string
		v int64
	}{{"retried", s.Retried}, {"skipped", s.Skipped}, {"late", s.Late}} {
		if f.v != 0 {
			key(f.k)
			w.Int(f.v)
		}
	}
	key("tps")
	w.Float(s.TPS)
	key("latency_ms")
	w.latency(&s.Latency)
	key("service_ms")
	w.latency(&s.Service)
	key("initial_connect_ms")
	w.Float(s.InitialConnectMS)
	if s.Reconnects != 0 {
		key("reconnects")
		w.Int(s.Reconnects)
	}
	if s.MaxTries != 0 {
		key("max_tries")
		w.Int(int64(s.MaxTries))
	}
	key("tx")
	if s.Tx == nil {
		w.Raw([]byte("null"))
	} else {
		w.OpenArray()
		for i := range s.Tx {
			s.Tx[i].writeJSON(w)
		}
		w.CloseArray()
	}
	s.writeRare(w, key)
	w.Close()
	return keys
}

// writeRare writes the fields of open-loop, sweep, group, replica and
// failover runs, the nested ones through encoding/json.
func (s *Summary) writeRare(w *JSONWriter, key func(string)) {
	if s.TargetRate != 0 {
		key("target_rate")
		w.Float(s.TargetRate)
	}
	if s.Unstarted != 0 {
		key("unstarted")
		w.Int(s.Unstarted)
	}
	if s.NotConnected != 0 {
		key("not_connected")
		w.Int(int64(s.NotConnected))
	}
	if len(s.Figures) > 0 {
		key("figures")
		w.Value(s.Figures)
	}
	if len(s.Steps) > 0 {
		key("steps")
		w.Value(s.Steps)
	}
	if len(s.Groups) > 0 {
		key("groups")
		w.Value(s.Groups)
	}
	if s.Replication != nil {
		key("replication")
		w.Value(s.Replication)
	}
	if s.Failover != nil {
		key("failover")
		w.Value(s.Failover)
	}
}

// latency writes LatencyStats.
func (w *JSONWriter) latency(l *LatencyStats) {
	w.Open()
	for _, f := range l.fields() {
		w.Key(f.k)
		w.Float(f.v)
	}
	w.Close()
}

type namedFloat struct {
	k string
	v float64
}

// fields are l's members in struct order.
func (l *LatencyStats) fields() [8]namedFloat {
	return [8]namedFloat{{"avg", l.Avg}, {"stddev", l.Stddev}, {"p50", l.P50}, {"p90", l.P90},
		{"p95", l.P95}, {"p99", l.P99}, {"p999", l.P999}, {"max", l.Max}}
}

// writeJSON writes a TxSummary as encoding/json does.
func (t *TxSummary) writeJSON(w *JSONWriter) {
	w.Open()
	w.Key("name")
	w.String(t.Name)
	if t.Group != "" {
		w.Key("group")
		w.String(t.Group)
	}
	w.Key("transactions")
	w.Int(t.Transactions)
	w.Key("failed")
	w.Int(t.Failed)
	if t.Unfinished != 0 {
		w.Key("unfinished")
		w.Int(t.Unfinished)
	}
	if t.CommittedInDrain != 0 {
		w.Key("committed_in_drain")
		w.Int(t.CommittedInDrain)
	}
	w.Key("errors")
	w.Errors(&t.Errors)
	if len(t.ErrorExamples) > 0 {
		w.Key("error_examples")
		w.Value(t.ErrorExamples)
	}
	w.Key("retries")
	w.Int(t.Retries)
	w.Key("tps")
	w.Float(t.TPS)
	w.Key("latency_ms")
	w.latency(&t.Latency)
	w.Key("service_ms")
	w.latency(&t.Service)
	if len(t.Statements) > 0 {
		w.Key("statements")
		w.Value(t.Statements)
	}
	w.Close()
}

// byTypeMember is one member of a by_type object: its key and its value
// as JSON.
type byTypeMember struct {
	k string
	v []byte
}

// writeByType writes "by_type": per type name (sorted), the type's
// TxSummary without its name, plus the figures of that type, keys sorted.
func (s *Summary) writeByType(w *JSONWriter) {
	byType := map[string][]byTypeMember{}
	for i := range s.Tx {
		byType[s.Tx[i].Name] = s.Tx[i].byTypeMembers(w)
	}
	for _, f := range s.Figures {
		if f.Tx == "" {
			continue
		}
		m, ok := byType[f.Tx]
		if !ok {
			m = []byTypeMember{}
		}
		if !slices.ContainsFunc(m, func(e byTypeMember) bool { return e.k == f.Name }) {
			v := JSONWriter{}
			v.Float(f.Value)
			w.fail(v.Err)
			m = append(m, byTypeMember{f.Name, v.B})
		}
		byType[f.Tx] = m
	}
	if len(byType) == 0 {
		return
	}
	w.Key("by_type")
	w.Open()
	names := make([]string, 0, len(byType))
	for n := range byType {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, n := range names {
		m := byType[n]
		slices.SortFunc(m, func(a, b byTypeMember) int { return strings.Compare(a.k, b.k) })
		w.Key(n)
		w.Open()
		for _, e := range m {
			w.Key(e.k)
			w.Raw(e.v)
		}
		w.Close()
	}
	w.Close()
}

// byTypeMembers is t as by_type has it: its JSON read back into a
// map[string]any (numbers as float64, objects' keys sorted) without
// "name". The common fields are written directly; a type with error
// examples, statements or a group that is not valid UTF-8 makes that
// round trip.
func (t *TxSummary) byTypeMembers(w *JSONWriter) []byTypeMember {
	if len(t.ErrorExamples) > 0 || len(t.Statements) > 0 || !utf8.ValidString(t.Group) {
		return t.byTypeRoundTrip(w)
	}
	num := func(k string, v float64) byTypeMember {
		e := JSONWriter{}
		e.Float(v)
		w.fail(e.Err)
		return byTypeMember{k, e.B}
	}
	obj := func(k string, fs []namedFloat) byTypeMember {
		slices.SortFunc(fs, func(a, b namedFloat) int { return strings.Compare(a.k, b.k) })
		e := JSONWriter{}
		e.Open()
		for _, f := range fs {
			e.Key(f.k)
			e.Float(f.v)
		}
		e.Close()
		w.fail(e.Err)
		return byTypeMember{k, e.B}
	}
	m := make([]byTypeMember, 0, 16)
	if t.Group != "" {
		m = append(m, byTypeMember{"group", appendJSONString(nil, t.Group)})
	}
	m = append(m, num("transactions", float64(t.Transactions)), num("failed", float64(t.Failed)))
	if t.Unfinished != 0 {
		m = append(m, num("unfinished", float64(t.Unfinished)))
	}
	if t.CommittedInDrain != 0 {
		m = append(m, num("committed_in_drain", float64(t.CommittedInDrain)))
	}
	var errs []namedFloat
	for c := range t.Errors {
		if c > 0 && t.Errors[c] != 0 {
			errs = append(errs, namedFloat{errorClassName(c), float64(t.Errors[c])})
		}
	}
	lat, svc := t.Latency.fields(), t.Service.fields()
	return append(m, obj("errors", errs), num("retries", float64(t.Retries)), num("tps", t.TPS),
		obj("latency_ms", lat[:]), obj("service_ms", svc[:]))
}

// byTypeRoundTrip is byTypeMembers through encoding/json.
func (t *TxSummary) byTypeRoundTrip(w *JSONWriter) []byTypeMember {
	tb, err := json.Marshal(t)
	var tm map[string]any
	if err == nil {
		err = json.Unmarshal(tb, &tm)
	}
	delete(tm, "name")
	m := make([]byTypeMember, 0, len(tm))
	for k, v := range tm {
		vb, verr := json.Marshal(v)
		if verr != nil {
			err = verr
		}
		m = append(m, byTypeMember{k, vb})
	}
	if err != nil {
		w.fail(err)
	}
	return m
}
