// Package htmlw writes HTML pages by hand: markup is written as it is and
// every value is escaped for the context it lands in, byte for byte as
// html/template's contextual escapers would (html/template's html.go,
// url.go, css.go, js.go). Pages are rendered with it rather than with
// template.Execute, whose reflection (MethodByName) makes the linker keep
// every exported method of the binary (issue 34).
package htmlw

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
)

// Writer is a page being written.
type Writer struct{ bytes.Buffer }

// S writes markup as it is.
func (w *Writer) S(markup ...string) {
	for _, m := range markup {
		w.WriteString(m)
	}
}

// T writes s as HTML text or as a quoted attribute value (html/template's
// htmlEscaper and attrEscaper, which agree on plain strings).
func (w *Writer) T(s string) {
	last := 0
	for i := 0; i < len(s); i++ {
		var r string
		switch s[i] {
		case 0:
			r = "\uFFFD"
		case '"':
			r = "&#34;"
		case '&':
			r = "&amp;"
		case '\'':
			r = "&#39;"
		case '+':
			r = "&#43;"
		case '<':
			r = "&lt;"
		case '>':
			r = "&gt;"
		default:
			continue
		}
		w.WriteString(s[last:i])
		w.WriteString(r)
		last = i + 1
	}
	w.WriteString(s[last:])
}

// Elem writes open and close as markup around text escaped as T: an
// element and its text, or the quotes around an attribute's value.
func (w *Writer) Elem(open, text, close string) {
	w.WriteString(open)
	w.T(text)
	w.WriteString(close)
}

// Elems writes each of texts as Elem(open, text, close): a row's cells
// that are alike, say.
func (w *Writer) Elems(open, close string, texts ...string) {
	for _, t := range texts {
		w.Elem(open, t, close)
	}
}

// Attr writes the attribute ` name="value"`, value escaped as T.
func (w *Writer) Attr(name, value string) {
	w.WriteByte(' ')
	w.WriteString(name)
	w.WriteString(`="`)
	w.T(value)
	w.WriteByte('"')
}

// URL writes s as the start of a quoted URL attribute: a scheme other than
// http, https or mailto becomes #ZgotmplZ (urlFilter), then as URLPath.
func (w *Writer) URL(s string) {
	if protocol, _, ok := strings.Cut(s, ":"); ok && !strings.Contains(protocol, "/") &&
		!strings.EqualFold(protocol, "http") && !strings.EqualFold(protocol, "https") && !strings.EqualFold(protocol, "mailto") {
		s = "#ZgotmplZ"
	}
	w.URLPath(s)
}

// URLPath writes s inside a URL attribute before its query: bytes that
// may not appear in a URL are %-encoded, valid escapes and reserved
// characters are kept (urlNormalizer). A template.URL anywhere in a URL
// is written this way too.
func (w *Writer) URLPath(s string) { w.T(encodeURL(s, true)) }

// URLQuery writes s in the query or fragment of a URL attribute: every
// reserved byte is %-encoded (urlEscaper).
func (w *Writer) URLQuery(s string) { w.T(encodeURL(s, false)) }

// encodeURL is html/template's processURLOnto.
func encodeURL(s string, norm bool) string {
	var b strings.Builder
	written := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case strings.IndexByte("!#$&*+,/:;=?@[]", c) >= 0:
			if norm {
				continue
			}
		case strings.IndexByte("-._~", c) >= 0, 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
			continue
		case c == '%':
			if norm && i+2 < len(s) && isHex(s[i+1]) && isHex(s[i+2]) {
				continue
			}
		}
		b.WriteString(s[written:i])
		fmt.Fprintf(&b, "%%%02x", c)
		written = i + 1
	}
	if written == 0 {
		return s
	}
	b.WriteString(s[written:])
	return b.String()
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

// CSSValue writes s as a value in a quoted style attribute
// (cssValueFilter, then T). A value with a CSS escape (backslash), a
// bracket, quote or other character that could end the declaration, or
// the words expression or mozbinding becomes ZgotmplZ; html/template
// decodes CSS escapes first, so it keeps some backslashed values this
// refuses.
func (w *Writer) CSSValue(s string) {
	if strings.ContainsAny(s, "\x00\"'()/;@[\\]`{}<>") || strings.Contains(s, "--") {
		w.T("ZgotmplZ")
		return
	}
	id := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		if c := s[i]; isCSSNmchar(c) {
			id = append(id, c)
		}
	}
	id = bytes.ToLower(id)
	if bytes.Contains(id, []byte("expression")) || bytes.Contains(id, []byte("mozbinding")) {
		w.T("ZgotmplZ")
		return
	}
	w.T(s)
}

// isCSSNmchar is CSS3 nmchar for ASCII bytes (html/template ignores
// the others here).
func isCSSNmchar(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' || c == '_'
}

// JSON writes v as a value inside a script element (jsValEscaper):
// encoding/json's output, which escapes <, >, &, U+2028 and U+2029, padded
// with spaces when it starts or ends like an identifier or number.
func (w *Writer) JSON(v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	pad := len(b) > 0 && (isJSIdent(b[0]) || isJSIdent(b[len(b)-1]))
	if pad {
		w.WriteByte(' ')
	}
	w.Write(b)
	if pad {
		w.WriteByte(' ')
	}
	return nil
}

func isJSIdent(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' || c == '$'
}
