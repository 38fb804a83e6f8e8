package store

import (
	"bytes"
	"encoding/json"
)

// SortedJSON is a JSON document kept as written and encoded with its
// objects' keys sorted, so that it reads back the same from every source:
// a results database's jsonb reorders keys (shorter first).
type SortedJSON []byte

// MarshalJSON implements json.Marshaler: the document with sorted keys,
// its numbers as written.
func (d SortedJSON) MarshalJSON() ([]byte, error) {
	if len(d) == 0 {
		return []byte("null"), nil
	}
	dec := json.NewDecoder(bytes.NewReader(d))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	return json.Marshal(v)
}

// UnmarshalJSON implements json.Unmarshaler: the document as it is.
func (d *SortedJSON) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		*d = nil
		return nil
	}
	*d = append((*d)[:0], b...)
	return nil
}
