package store

import (
	"encoding/json"
	"testing"
)

// TestSortedJSONReadsTheSameInAnyKeyOrder: a run configuration read back
// from a results database (jsonb: shorter keys first) encodes as the one
// read from spec.json; numbers keep every digit; writing keeps it as given.
func TestSortedJSONReadsTheSameInAnyKeyOrder(t *testing.T) {
	asWritten := `{"workload":"tpcb","params":{"select-only":"true","scale":"1"},"seed":18446744073709551615,"time":2000000000}`
	asJSONB := `{"seed": 18446744073709551615, "time": 2000000000, "params": {"scale": "1", "select-only": "true"}, "workload": "tpcb"}`
	var a, b struct {
		Config SortedJSON `json:"config,omitempty"`
	}
	if err := json.Unmarshal([]byte(`{"config":`+asWritten+`}`), &a); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(`{"config":`+asJSONB+`}`), &b); err != nil {
		t.Fatal(err)
	}
	ja, err := json.Marshal(a)
	if err != nil {
		t.Fatal(err)
	}
	jb, err := json.Marshal(b)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"config":{"params":{"scale":"1","select-only":"true"},"seed":18446744073709551615,"time":2000000000,"workload":"tpcb"}}`
	if string(ja) != want || string(jb) != want {
		t.Errorf("encoded\n %s\n %s\nwant\n %s", ja, jb, want)
	}
	given := struct {
		Config SortedJSON `json:"config"`
	}{SortedJSON(asWritten)}
	if j, _ := json.Marshal(given); string(j) != `{"config":`+asWritten+`}` {
		t.Errorf("written as %s, want it as given", j)
	}
	var none struct {
		Config SortedJSON `json:"config,omitempty"`
	}
	if j, _ := json.Marshal(none); string(j) != `{}` {
		t.Errorf("no config: %s", j)
	}
}
