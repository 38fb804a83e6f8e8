package driver

import "time"

// loadModel says when a client's next transaction is due. Each model is a
// file of its own: closed.go (the closed loop), openloop.go (an open-loop
// schedule and its dispatcher); ramp.go staggers client starts under
// either.
type loadModel interface {
	// next waits until the client's next transaction is due and returns
	// when it was due (the zero time: now); false when the client is done
	// (stopNew closed, -t reached, the schedule over). done is how many
	// transactions the client has finished.
	next(stopNew <-chan struct{}, done int) (intended time.Time, ok bool)
	// open reports an open loop (arrivals set by a schedule, so an
	// emulated user's keying and think times do not apply).
	open() bool
}
