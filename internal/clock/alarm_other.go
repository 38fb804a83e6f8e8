//go:build !linux

package clock

func newAlarm() Alarm { return nil }
