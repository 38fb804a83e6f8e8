package htmlw

import (
	"html/template"
	"strings"
	"testing"
)

// values exercise every escaper: markup, quotes, schemes, URL reserved
// bytes and escapes, CSS breakouts, JS line terminators, NUL, bad UTF-8.
var values = []string{"", "plain", "<script>alert(1)</script>", `"'&+<b>`, "javascript:alert(1)", "JavaScript:x", "HTTP://a/b?c=d&e=f#g",
	"mailto:a@b", "/run/a b/%41%zz?x=1&y=ü", "a\u2028b\u2029c", "</script><script>x()</script>", "nul\x00end", "bad\xffutf8",
	"x;} body{color:red", "#1f77b4", "red", "expression(alert(1))", "Expr\u00e9ession", "a--b", "url(x)", "a/b:c", "~._-!$*,;=@[]"}

// same checks that write renders every value as the template text tmpl
// does, with {{.}} where the value goes.
func same(t *testing.T, tmpl string, write func(w *Writer, v string)) {
	t.Helper()
	before, after, _ := strings.Cut(tmpl, "{{.}}")
	sameWhole(t, tmpl, func(w *Writer, v string) {
		w.S(before)
		write(w, v)
		w.S(after)
	})
}

// sameWhole checks that write, writing all of tmpl, renders every value
// as tmpl does.
func sameWhole(t *testing.T, tmpl string, write func(w *Writer, v string)) {
	t.Helper()
	ref := template.Must(template.New("").Parse(tmpl))
	for _, v := range values {
		var want strings.Builder
		if err := ref.Execute(&want, v); err != nil {
			t.Fatal(err)
		}
		var w Writer
		write(&w, v)
		if w.String() != want.String() {
			t.Errorf("%s with %q:\n got %q\nwant %q", tmpl, v, w.String(), want.String())
		}
	}
}

func TestSameAsHTMLTemplate(t *testing.T) {
	same(t, `<p>{{.}}</p>`, (*Writer).T)
	same(t, `<title>{{.}}</title>`, (*Writer).T)
	same(t, `<td class="{{.}}">`, (*Writer).T)
	sameWhole(t, `<td class="x">{{.}}</td>`, func(w *Writer, v string) { w.Elem(`<td class="x">`, v, "</td>") })
	sameWhole(t, `<td>{{.}}</td><td>{{.}}</td><td>{{.}}</td>`, func(w *Writer, v string) { w.Elems("<td>", "</td>", v, v, v) })
	sameWhole(t, `<td title="{{.}}" class="{{.}}">`, func(w *Writer, v string) {
		w.S("<td")
		w.Attr("title", v)
		w.Attr("class", v)
		w.S(">")
	})
	same(t, `<a href="{{.}}">`, (*Writer).URL)
	same(t, `<a href="/run/{{.}}/png">`, (*Writer).URLPath)
	same(t, `<a href="/compare?run={{.}}">`, (*Writer).URLQuery)
	same(t, `<i style="background: {{.}}">`, (*Writer).CSSValue)
	same(t, `<script type="application/json">{{.}}</script>`, func(w *Writer, v string) {
		if err := w.JSON(v); err != nil {
			t.Fatal(err)
		}
	})
}

func TestTrustedURLNormalized(t *testing.T) {
	ref := template.Must(template.New("").Parse(`<a href="/x?{{.}}&amp;m={{.}}">`))
	for _, v := range values {
		var want strings.Builder
		if err := ref.Execute(&want, template.URL(v)); err != nil {
			t.Fatal(err)
		}
		var w Writer
		w.S(`<a href="/x?`)
		w.URLPath(v)
		w.S(`&amp;m=`)
		w.URLPath(v)
		w.S(`">`)
		if w.String() != want.String() {
			t.Errorf("template.URL %q:\n got %q\nwant %q", v, w.String(), want.String())
		}
	}
}
