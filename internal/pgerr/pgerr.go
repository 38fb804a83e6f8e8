// Package pgerr classifies errors from PostgreSQL and from connecting to it
// into metrics.ErrorClass, once, where they happen, and phrases them as one
// line for the user.
package pgerr

import (
	"context"
	"errors"
	"io"
	"net"
	"strings"
	"syscall"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/pgarena/pgarena/internal/metrics"
)

// Classify returns the class of err; nil is metrics.ClassNone.
func Classify(err error) metrics.ErrorClass {
	if err == nil {
		return metrics.ClassNone
	}
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		return classifySQLState(pgErr.Code)
	}
	var dnsErr *net.DNSError
	if errors.As(err, &dnsErr) {
		return metrics.ClassDNS
	}
	if errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ENOENT) && isConnectErr(err) {
		return metrics.ClassConnectRefused
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return metrics.ClassTimeout
	}
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, syscall.ECONNRESET) ||
		errors.Is(err, syscall.EPIPE) || errors.Is(err, net.ErrClosed) {
		return metrics.ClassConnectionLost
	}
	if pgconn.SafeToRetry(err) && isConnectErr(err) {
		return metrics.ClassConnectRefused
	}
	msg := err.Error()
	switch {
	case strings.Contains(msg, "conn closed"), strings.Contains(msg, "unexpected EOF"),
		strings.Contains(msg, "connection reset"), strings.Contains(msg, "broken pipe"):
		return metrics.ClassConnectionLost
	case strings.Contains(msg, "connection refused"):
		return metrics.ClassConnectRefused
	case strings.Contains(msg, "no such host"):
		return metrics.ClassDNS
	}
	var connectErr *pgconn.ConnectError
	if errors.As(err, &connectErr) {
		return metrics.ClassConnectRefused
	}
	return metrics.ClassOther
}

func isConnectErr(err error) bool {
	var connectErr *pgconn.ConnectError
	return errors.As(err, &connectErr)
}

func classifySQLState(code string) metrics.ErrorClass {
	switch {
	case code == "53300": // too_many_connections
		return metrics.ClassTooManyConnections
	case code == "57P01" || code == "57P02" || code == "57P03": // admin/crash shutdown, cannot connect now
		return metrics.ClassAdminShutdown
	case code == "40P01":
		return metrics.ClassDeadlock
	case code == "40001":
		return metrics.ClassSerialization
	case code == "57014": // query_canceled (statement_timeout)
		return metrics.ClassTimeout
	case code == "25006":
		return metrics.ClassReadOnly
	case strings.HasPrefix(code, "23"):
		return metrics.ClassConstraint
	case strings.HasPrefix(code, "28"): // invalid authorization specification, invalid password
		return metrics.ClassAuth
	case strings.HasPrefix(code, "08"): // connection exception
		return metrics.ClassConnectionLost
	}
	return metrics.ClassOther
}

// Describe phrases err as one line for the user, without stack traces or
// passwords, naming its class when that helps.
func Describe(err error) string {
	if err == nil {
		return ""
	}
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		s := pgErr.Severity + ": " + pgErr.Message + " (SQLSTATE " + pgErr.Code + ")"
		if pgErr.Detail != "" {
			s += ": " + pgErr.Detail
		}
		return s
	}
	return oneLine(err.Error())
}

// oneLine joins a multi-line message (pgx puts the cause of a failed
// connection on its own line) into one line.
func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}
