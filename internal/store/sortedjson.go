package store

import (
	"bytes"
	"encoding/json"
)

// SortedJSON is a JSON document written as given and read back with its
// objects' keys sorted, so that it reads the same from every source: a
// results database's jsonb reorders keys (shorter first). Writing costs
// nothing; reading decodes and encodes it once.
type SortedJSON []byte

// MarshalJSON implements json.Marshaler: the document as it is.
func (d SortedJSON) MarshalJSON() ([]byte, error) {
	if len(d) == 0 {
		return []byte("null"), nil
	}
	return d, nil
}

// UnmarshalJSON implements json.Unmarshaler: the document with sorted
// keys, its numbers as written.
func (d *SortedJSON) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		*d = nil
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return err
	}
	sorted, err := json.Marshal(v)
	if err != nil {
		return err
	}
	*d = sorted
	return nil
}
