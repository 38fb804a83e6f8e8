// Package lazy holds package-level values built on first use, so that no
// pgarena package does work at program start (TestNoInitFunctions).
package lazy

import "sync"

// Value is a package-level value built on first use by New, once, and
// shared by every caller after. Declared as
//
//	var versionRE = lazy.Value[*regexp.Regexp]{New: func() *regexp.Regexp {
//		return regexp.MustCompile(`\d+\.\d+`)
//	}}
//
// it adds no init work: a composite literal whose func (a literal that
// captures nothing, or a named function) is static data the linker lays
// out, whereas regexp.MustCompile, a map literal or sync.OnceValue at
// package level each run code at start. Use it through a pointer (a
// package-level variable, never a copy): it holds a sync.Once.
type Value[T any] struct {
	New  func() T
	once sync.Once
	v    T
}

// Get returns the value, building it with New on the first call; calls
// that race with the first wait for it.
func (l *Value[T]) Get() T {
	l.once.Do(func() { l.v = l.New() })
	return l.v
}
