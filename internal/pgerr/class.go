package pgerr

import "fmt"

// ErrorClass is the kind of a failed transaction or connection attempt, as
// listed in DESIGN.md "Errors". ClassNone marks success.
type ErrorClass uint8

// The error classes. Their String form is the stable name used in output,
// JSON and CSV.
const (
	ClassNone ErrorClass = iota
	ClassConnectRefused
	ClassDNS
	ClassAuth
	ClassTooManyConnections
	ClassConnectionLost
	ClassAdminShutdown
	ClassDeadlock
	ClassSerialization
	ClassTimeout
	ClassReadOnly
	ClassConstraint
	ClassOther
	// Classes added later go here, after ClassOther, so that the columns
	// of exports keep their places.
	ClassTLS                // TLS refused, handshake or certificate verification failed
	ClassStarting           // the server is starting up or recovering (57P03)
	ClassPreparedStatements // a pooler lost the session's prepared statements (26000, 42P05)
	numClasses
)

// NumClasses is the number of error classes including ClassNone, for arrays
// indexed by ErrorClass.
const NumClasses = int(numClasses)

var classNames = [...]string{
	ClassNone:               "none",
	ClassConnectRefused:     "connect_refused",
	ClassDNS:                "dns",
	ClassAuth:               "auth",
	ClassTooManyConnections: "too_many_connections",
	ClassConnectionLost:     "connection_lost",
	ClassAdminShutdown:      "admin_shutdown",
	ClassDeadlock:           "deadlock",
	ClassSerialization:      "serialization",
	ClassTimeout:            "timeout",
	ClassReadOnly:           "read_only",
	ClassConstraint:         "constraint",
	ClassOther:              "other",
	ClassTLS:                "tls",
	ClassStarting:           "starting",
	ClassPreparedStatements: "prepared_statements",
}

func (c ErrorClass) String() string {
	if int(c) < len(classNames) {
		return classNames[c]
	}
	return fmt.Sprintf("class(%d)", c)
}

// ParseErrorClass returns the class named s.
func ParseErrorClass(s string) (ErrorClass, bool) {
	for i, n := range classNames {
		if n == s {
			return ErrorClass(i), true
		}
	}
	return 0, false
}

// MarshalText writes the class by name.
func (c ErrorClass) MarshalText() ([]byte, error) { return []byte(c.String()), nil }

// UnmarshalText reads a class name; an unknown one (from a newer pgarena)
// is ClassOther.
func (c *ErrorClass) UnmarshalText(b []byte) error {
	p, ok := ParseErrorClass(string(b))
	if !ok || p == ClassNone {
		p = ClassOther
	}
	*c = p
	return nil
}

// Advice says what a user can do about failures of class c, for classes
// whose cause is a setup the user can change; empty for the others.
func (c ErrorClass) Advice() string {
	switch c {
	case ClassPreparedStatements:
		return "a pooler in transaction or statement mode (pgbouncer) does not keep a session's prepared statements: " +
			"use -M simple or -M extended, or pgbouncer >= 1.21 with max_prepared_statements > 0"
	case ClassTLS:
		return "check sslmode, sslrootcert and that the server's certificate names the host pgarena connects to"
	case ClassStarting:
		return "the server is starting up or recovering; --wait-ready DURATION waits until it accepts connections"
	case ClassTooManyConnections:
		return "fewer clients (-c), a larger max_connections, or a pooler"
	}
	return ""
}

// Retryable reports whether a transaction failing with c may be retried
// (--max-tries): serialization failures and deadlocks.
func (c ErrorClass) Retryable() bool {
	return c == ClassSerialization || c == ClassDeadlock
}

// ConnectionBroken reports whether a failure of class c means the client's
// connection is gone (or never came) and must be re-established.
func (c ErrorClass) ConnectionBroken() bool {
	switch c {
	case ClassConnectRefused, ClassDNS, ClassAuth, ClassTooManyConnections,
		ClassConnectionLost, ClassAdminShutdown, ClassTLS, ClassStarting:
		return true
	}
	return false
}
