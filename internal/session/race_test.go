//go:build race

package session

// raceEnabled: built with -race, which doubles Go's stack guard and grows
// every frame.
const raceEnabled = true
