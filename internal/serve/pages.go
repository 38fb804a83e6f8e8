package serve

import (
	"bytes"
	"embed"
	"html/template"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/pgarena/pgarena/internal/lazy"
)

var (
	//go:embed assets/*.tmpl
	templateFS embed.FS
	//go:embed assets/live.js
	liveJS []byte
)

// templates are parsed on first use, not when pgarena starts.
var templates = lazy.Value[*template.Template]{New: buildTemplates}

func buildTemplates() *template.Template {
	return template.Must(template.New("").Funcs(template.FuncMap{
		"ms":   func(v float64) string { return strconv.FormatFloat(v, 'f', 2, 64) },
		"path": url.PathEscape,
		"time": func(t time.Time) string { return t.Local().Format("2006-01-02 15:04:05") },
		"query": func(k, v string) template.URL {
			return template.URL(url.QueryEscape(k) + "=" + url.QueryEscape(v))
		},
	}).ParseFS(templateFS, "assets/*.tmpl"))
}

// render executes the named page template into a buffer first, so that a
// failure is an error page rather than half a page.
func render(w http.ResponseWriter, name string, data any) {
	var buf bytes.Buffer
	if err := templates.Get().ExecuteTemplate(&buf, name, data); err != nil {
		http.Error(w, "render "+name+": "+err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	_, _ = w.Write(buf.Bytes())
}

func urlEscape(s string) string { return url.QueryEscape(s) }

func (s *Server) handleLiveJS(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "text/javascript; charset=utf-8")
	_, _ = w.Write(liveJS)
}
