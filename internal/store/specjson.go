package store

import (
	"github.com/pgarena/pgarena/internal/metrics"
)

// MarshalJSON writes spec.json's form, byte for byte what encoding/json
// writes for the struct (TestSpecJSON), without its reflection.
func (s RunSpec) MarshalJSON() ([]byte, error) {
	w := metrics.JSONWriter{B: make([]byte, 0, 1024+len(s.Config))}
	w.Open()
	w.Key("id")
	w.String(s.ID)
	w.Key("created")
	w.Time(s.Created)
	w.Key("pgarena_version")
	w.String(s.PgarenaVersion)
	w.Key("command_line")
	w.Strings(s.CommandLine)
	if len(s.Config) > 0 {
		w.Key("config")
		w.Raw(s.Config) // compact, as runconfig and SortedJSON write it
	}
	w.Key("workload")
	w.String(s.Workload)
	if len(s.Params) > 0 {
		w.Key("params")
		w.StringMap(s.Params)
	}
	w.Key("seed")
	w.Int(s.Seed)
	if s.Label != "" {
		w.Key("label")
		w.String(s.Label)
	}
	w.Key("clients")
	w.Int(int64(s.Clients))
	w.Key("threads")
	w.Int(int64(s.Threads))
	w.Key("duration_s")
	w.Float(s.DurationS)
	w.Key("transactions")
	w.Int(int64(s.Transactions))
	w.Key("query_mode")
	w.String(s.QueryMode)
	w.Key("connect_per_tx")
	w.Bool(s.ConnectPerTx)
	w.Key("max_tries")
	w.Int(int64(s.MaxTries))
	w.Key("tick_s")
	w.Float(s.TickS)
	if len(s.SessionSettings) > 0 {
		w.Key("session_settings")
		w.Strings(s.SessionSettings)
	}
	w.Key("target")
	w.String(s.Target)
	w.Key("embedded")
	w.Bool(s.Embedded)
	w.Key("host")
	s.Host.writeJSON(&w)
	if len(s.Load) > 0 {
		w.Key("load")
		w.StringMap(s.Load)
	}
	s.writeSegment(&w)
	w.Close()
	return w.B, w.Err
}

// writeSegment writes the plan tag's, segment's and merge's members.
func (s *RunSpec) writeSegment(w *metrics.JSONWriter) {
	for _, f := range []struct{ k, v string }{{"plan", s.Plan}, {"cell", s.Cell}, {"cell_name", s.CellName}} {
		if f.v != "" {
			w.Key(f.k)
			w.String(f.v)
		}
	}
	if s.Repeat != 0 {
		w.Key("repeat")
		w.Int(int64(s.Repeat))
	}
	for _, f := range []struct{ k, v string }{{"segment", s.Segment}, {"segment_of", s.SegmentOf}} {
		if f.v != "" {
			w.Key(f.k)
			w.String(f.v)
		}
	}
	if s.WholeClients != 0 {
		w.Key("whole_clients")
		w.Int(int64(s.WholeClients))
	}
	if !s.StartAt.IsZero() {
		w.Key("start_at")
		w.Time(s.StartAt)
	}
	if len(s.MergedFrom) > 0 {
		w.Key("merged_from")
		w.Strings(s.MergedFrom)
	}
	if len(s.MergeNotes) > 0 {
		w.Key("merge_notes")
		w.Strings(s.MergeNotes)
	}
}

func (h *HostInfo) writeJSON(w *metrics.JSONWriter) {
	w.Open()
	w.Key("hostname")
	w.String(h.Hostname)
	w.Key("cores")
	w.Int(int64(h.Cores))
	w.Key("memory_bytes")
	w.Int(h.MemoryBytes)
	for _, f := range []struct{ k, v string }{{"kernel", h.Kernel}, {"os", h.OS}, {"arch", h.Arch}, {"go_version", h.GoVersion}} {
		w.Key(f.k)
		w.String(f.v)
	}
	if h.Machine != "" {
		w.Key("machine")
		w.String(h.Machine)
	}
	w.Close()
}

// MarshalJSON writes server.json's form, byte for byte what encoding/json
// writes for the struct (TestSpecJSON), without its reflection.
func (s ServerInfo) MarshalJSON() ([]byte, error) {
	w := metrics.JSONWriter{B: make([]byte, 0, 1024)}
	w.Open()
	w.Key("version")
	w.String(s.Version)
	w.Key("version_num")
	w.Int(int64(s.VersionNum))
	if len(s.Settings) > 0 {
		w.Key("settings")
		w.StringMap(s.Settings)
	}
	if s.DataDir != "" {
		w.Key("data_dir")
		w.String(s.DataDir)
	}
	if s.Pooler != nil {
		w.Key("pooler")
		w.Value(s.Pooler)
	}
	if s.ClockOffsetMS != nil {
		w.Key("clock_offset_ms")
		w.Float(*s.ClockOffsetMS)
	}
	if s.ClockRTTMS != 0 {
		w.Key("clock_rtt_ms")
		w.Float(s.ClockRTTMS)
	}
	if s.Citus != nil {
		w.Key("citus")
		w.Value(s.Citus)
	}
	w.Close()
	return w.B, w.Err
}
