// Package pgerr classifies errors from PostgreSQL and from connecting to it
// into an ErrorClass, once, where they happen, keeps what they said as an
// ErrorDetail (SQLSTATE, message, detail, hint), and phrases them as one
// line for the user. The classes are the ones DESIGN.md "Errors" lists;
// metrics counts failures by them.
package pgerr

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io"
	"net"
	"strings"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
)

// Classify returns the class of err; nil is ClassNone.
func Classify(err error) ErrorClass {
	if err == nil {
		return ClassNone
	}
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		return classifySQLState(pgErr.Code)
	}
	var dnsErr *net.DNSError
	if errors.As(err, &dnsErr) {
		return ClassDNS
	}
	if errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ENOENT) && isConnectErr(err) {
		return ClassConnectRefused
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return ClassTimeout
	}
	if isTLS(err) {
		return ClassTLS
	}
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, syscall.ECONNRESET) ||
		errors.Is(err, syscall.EPIPE) || errors.Is(err, net.ErrClosed) {
		return ClassConnectionLost
	}
	if pgconn.SafeToRetry(err) && isConnectErr(err) {
		return ClassConnectRefused
	}
	msg := err.Error()
	switch {
	case strings.Contains(msg, "conn closed"), strings.Contains(msg, "unexpected EOF"),
		strings.Contains(msg, "connection reset"), strings.Contains(msg, "broken pipe"):
		return ClassConnectionLost
	case strings.Contains(msg, "connection refused"):
		return ClassConnectRefused
	case strings.Contains(msg, "no such host"):
		return ClassDNS
	}
	var connectErr *pgconn.ConnectError
	if errors.As(err, &connectErr) {
		return ClassConnectRefused
	}
	return ClassOther
}

// isTLS reports a failure to set up TLS: the server refused it (sslmode
// require against ssl=off), the handshake failed, or the server's
// certificate did not verify (verify-ca, verify-full). pgconn reports these
// as a "tls error" of its connect stage, or, for a handshake that runs on
// the first write, as a write error wrapping crypto/tls's errors.
func isTLS(err error) bool {
	var (
		verifyErr   *tls.CertificateVerificationError
		alertErr    tls.AlertError
		recordErr   tls.RecordHeaderError
		hostErr     x509.HostnameError
		authorityEr x509.UnknownAuthorityError
		invalidErr  x509.CertificateInvalidError
	)
	if errors.As(err, &verifyErr) || errors.As(err, &alertErr) || errors.As(err, &recordErr) ||
		errors.As(err, &hostErr) || errors.As(err, &authorityEr) || errors.As(err, &invalidErr) {
		return true
	}
	msg := err.Error()
	return strings.Contains(msg, "tls error") || strings.Contains(msg, "server refused TLS connection") ||
		strings.Contains(msg, "tls: ")
}

func isConnectErr(err error) bool {
	var connectErr *pgconn.ConnectError
	return errors.As(err, &connectErr)
}

func classifySQLState(code string) ErrorClass {
	switch {
	case code == "53300": // too_many_connections
		return ClassTooManyConnections
	case code == "57P01" || code == "57P02": // admin_shutdown, crash_shutdown
		return ClassAdminShutdown
	case code == "57P03": // cannot_connect_now: starting up, in recovery, not yet accepting connections
		return ClassStarting
	case code == "26000" || code == "42P05": // invalid_sql_statement_name, duplicate_prepared_statement
		// pgarena names its own prepared statements (pgx's statement
		// cache), so a missing or duplicate one means the session's
		// statements did not stay with it: a pooler in transaction mode.
		return ClassPreparedStatements
	case code == "40P01":
		return ClassDeadlock
	case code == "40001":
		return ClassSerialization
	case code == "57014": // query_canceled (statement_timeout)
		return ClassTimeout
	case code == "25006":
		return ClassReadOnly
	case strings.HasPrefix(code, "23"):
		return ClassConstraint
	case strings.HasPrefix(code, "28"): // invalid authorization specification, invalid password
		return ClassAuth
	case strings.HasPrefix(code, "08"): // connection exception
		return ClassConnectionLost
	}
	return ClassOther
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

// Detail returns what err said, for keeping with a failure that happened
// at: a server error's SQLSTATE, message, detail and hint, or the one-line
// text of any other error. Texts are bounded in length.
func Detail(err error, at time.Time) ErrorDetail {
	if err == nil {
		return ErrorDetail{Time: at}
	}
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		return ErrorDetail{Time: at, Severity: pgErr.Severity, SQLState: pgErr.Code, Message: oneLine(pgErr.Message), Detail: oneLine(pgErr.Detail),
			Hint: oneLine(pgErr.Hint)}.Bounded()
	}
	return ErrorDetail{Time: at, Message: oneLine(err.Error())}.Bounded()
}

// oneLine joins a multi-line message (pgx puts the cause of a failed
// connection on its own line) into one line. A line that repeats an
// earlier one is left out: pgx tries a host once with TLS and once
// without (sslmode prefer), and a refused dial says the same twice.
func oneLine(s string) string {
	lines := strings.Split(s, "\n")
	out := make([]string, 0, len(lines))
	seen := map[string]bool{}
	for _, l := range lines {
		l = strings.Join(strings.Fields(l), " ")
		if l == "" || seen[l] {
			continue
		}
		seen[l] = true
		out = append(out, l)
	}
	return strings.Join(out, " ")
}
