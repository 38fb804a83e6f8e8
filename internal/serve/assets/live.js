// pgarena serve: keeps a running run's report up to date. The server sends
// "update" when the run directory changed; the page is fetched again, its
// sections other than the charts swapped in, and the charts given the new
// data (report.js's pgarenaUpdate). "end" and "gone" stop following.
(function () {
  "use strict";
  var me = document.currentScript;
  var id = me.getAttribute("data-run");
  var url = "/run/" + encodeURIComponent(id);
  var busy = false, again = false;
  window.pgarenaLive = { updates: 0, state: "following" };

  function refresh() {
    if (busy) { again = true; return; }
    busy = true;
    fetch(url, { cache: "no-store", credentials: "same-origin" }).then(function (r) {
      if (!r.ok) throw new Error("HTTP " + r.status);
      return r.text();
    }).then(function (text) {
      var doc = new DOMParser().parseFromString(text, "text/html");
      // a section the page lacks (a failover's, once armed): load it whole
      var added = Array.prototype.some.call(doc.querySelectorAll("main > section"), function (sec) {
        return sec.id && !document.getElementById(sec.id);
      });
      if (added) { location.reload(); return; }
      document.querySelectorAll("main > section").forEach(function (sec) {
        if (sec.id === "charts") return;
        var next = doc.getElementById(sec.id);
        if (next) sec.innerHTML = next.innerHTML;
      });
      var data = JSON.parse(doc.getElementById("pgarena-data").textContent);
      if (!window.pgarenaUpdate || !window.pgarenaUpdate(data)) { location.reload(); return; }
      window.pgarenaLive.updates++;
    }).catch(function (e) {
      window.pgarenaLive.error = String(e);
    }).then(function () {
      busy = false;
      if (again) { again = false; refresh(); }
    });
  }

  var es = new EventSource(url + "/events");
  es.addEventListener("update", refresh);
  es.addEventListener("end", function () { es.close(); window.pgarenaLive.state = "ended"; refresh(); });
  es.addEventListener("gone", function (ev) { es.close(); window.pgarenaLive.state = "gone: " + ev.data; });
})();
