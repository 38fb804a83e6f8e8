package driver

import "time"

// rampStart is when client i of n may start its first transaction under a
// ramp: evenly spread over the ramp, the first at once.
func rampStart(start time.Time, ramp time.Duration, i, n int) time.Time {
	if ramp <= 0 || n <= 1 {
		return start
	}
	return start.Add(ramp * time.Duration(i) / time.Duration(n))
}
