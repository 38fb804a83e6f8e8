package cli

import (
	"fmt"
	"time"

	"github.com/pgarena/pgarena/internal/session"
)

// maxClients is the largest client count of the plan.
func maxClients(steps []session.Step) int {
	m := 0
	for _, s := range steps {
		m = max(m, s.Clients)
	}
	return m
}

// rateWarning says when a rate cannot be carried by the clients: by
// Little's law each client must finish a transaction in clients/rate
// seconds, and under a millisecond is beyond most servers.
func rateWarning(s session.Step) string {
	rate := s.Rate
	if rate == 0 {
		rate = s.Schedule.MaxRate()
	}
	if rate == 0 {
		return ""
	}
	per := time.Duration(float64(s.Clients) / rate * float64(time.Second))
	if per < time.Millisecond {
		return fmt.Sprintf("%g tx/s with %d clients needs every transaction to finish within %s (Little's law): expect queueing; add clients (-c) if the server can take them",
			rate, s.Clients, per.Round(time.Microsecond))
	}
	return ""
}
