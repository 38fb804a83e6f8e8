package pgerr

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestErrorDetailBounded(t *testing.T) {
	d := ErrorDetail{Message: strings.Repeat("é", 400), Hint: "short"}.Bounded()
	if len(d.Message) > maxDetailText+len("…") || !strings.HasSuffix(d.Message, "…") || d.Hint != "short" {
		t.Fatalf("bounded: %d bytes, %q", len(d.Message), d.Hint)
	}
	if !strings.HasPrefix(d.Message, "é") || strings.ContainsRune(d.Message, '\uFFFD') {
		t.Fatalf("cut inside a rune")
	}
}

func TestErrorClassText(t *testing.T) {
	var c ErrorClass
	if err := c.UnmarshalText([]byte("from_the_future")); err != nil || c != ClassOther {
		t.Fatalf("unknown class read as %s", c)
	}
	b, _ := json.Marshal(ClassTLS)
	if string(b) != `"tls"` {
		t.Fatalf("got %s", b)
	}
}

func TestErrorClassNamesRoundTrip(t *testing.T) {
	for c := ClassNone; c < numClasses; c++ {
		if p, ok := ParseErrorClass(c.String()); !ok || p != c {
			t.Fatalf("class %d does not round trip", c)
		}
	}
}
