package cli

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// seconds is a duration flag that also takes a bare number of seconds, as
// pgbench's -T and -P do: "60", "60s", "5m", "1h30m".
type seconds struct{ d *time.Duration }

func (s seconds) String() string {
	if s.d == nil || *s.d == 0 {
		return "0"
	}
	return fmtDuration(*s.d)
}

func (s seconds) Set(v string) error {
	v = strings.TrimSpace(v)
	if n, err := strconv.ParseFloat(v, 64); err == nil {
		if n < 0 {
			return fmt.Errorf("must not be negative")
		}
		*s.d = time.Duration(n * float64(time.Second))
		return nil
	}
	d, err := time.ParseDuration(v)
	if err != nil {
		return fmt.Errorf("not a duration (use seconds or a unit: 30s, 5m, 1h)")
	}
	if d < 0 {
		return fmt.Errorf("must not be negative")
	}
	*s.d = d
	return nil
}

func (s seconds) Type() string { return "duration" }
