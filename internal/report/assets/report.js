// pgarena report: draws the charts described by the embedded JSON with uPlot.
(function () {
  "use strict";
  var data = JSON.parse(document.getElementById("pgarena-data").textContent);
  var height = 260;
  window.pgarenaCharts = [];

  function fmt(v) {
    if (v == null || isNaN(v)) return "-";
    var a = Math.abs(v);
    return a >= 1000 ? v.toFixed(0) : a >= 10 ? v.toFixed(1) : v.toFixed(3);
  }

  // Values: a number; null, no value at this x (another run's point: the
  // line joins over it); "gap", no data here (the line breaks). uPlot
  // joins over undefined and breaks at null.
  function column(vs) {
    return vs.map(function (v) { return v === "gap" ? null : v === null ? undefined : v; });
  }

  // Shade warm-up intervals under the series.
  function shadeWarmup(u) {
    if (!data.warmup || !data.warmup.length) return;
    var ctx = u.ctx;
    ctx.save();
    ctx.fillStyle = "rgba(120, 130, 140, 0.15)";
    data.warmup.forEach(function (b) {
      var x0 = u.valToPos(b.from, "x", true), x1 = u.valToPos(b.to, "x", true);
      var l = Math.max(x0, u.bbox.left), r = Math.min(x1, u.bbox.left + u.bbox.width);
      if (r > l) ctx.fillRect(l, u.bbox.top, r - l, u.bbox.height);
    });
    ctx.restore();
  }

  // A failover's moments: a dashed line each, labelled at the top.
  var eventColors = { "fault": "#d62728", "promoted": "#ff7f0e", "first commit": "#2ca02c", "recovered": "#1f77b4" };
  function drawEvents(u) {
    if (!data.events || !data.events.length) return;
    var ctx = u.ctx, px = uPlot.pxRatio || 1;
    ctx.save();
    ctx.setLineDash([5 * px, 4 * px]);
    ctx.lineWidth = 1.5 * px;
    ctx.font = Math.round(11 * px) + "px sans-serif";
    ctx.textAlign = "left";
    ctx.textBaseline = "alphabetic";
    data.events.forEach(function (e, i) {
      var x = u.valToPos(e.x, "x", true);
      if (x < u.bbox.left || x > u.bbox.left + u.bbox.width) return;
      ctx.strokeStyle = ctx.fillStyle = eventColors[e.name] || "#555";
      ctx.beginPath();
      ctx.moveTo(x, u.bbox.top);
      ctx.lineTo(x, u.bbox.top + u.bbox.height);
      ctx.stroke();
      ctx.fillText(e.name, x + 3 * px, u.bbox.top + 12 * px * (1 + i % 4));
    });
    ctx.restore();
  }

  function width(el) {
    return Math.max(280, el.clientWidth || el.parentNode.clientWidth || 600);
  }

  data.charts.forEach(function (c) {
    var el = document.getElementById("chart-" + c.id);
    if (!el) return;
    var ownX = !!c.x;
    var series = [{ label: ownX ? (c.xlabel || "x") : "s", value: function (u, v) {
      return v == null ? "-" : ownX ? fmt(v) : v.toFixed(1) + " s";
    } }];
    var cols = [ownX ? c.x : data.x];
    c.series.forEach(function (s) {
      series.push({
        label: s.name,
        stroke: s.color,
        width: 1.5,
        dash: s.dash ? [6, 4] : undefined,
        spanGaps: false,
        points: { show: !!c.points, size: 7 },
        value: function (u, v) { return fmt(v); }
      });
      cols.push(column(s.values));
    });
    var opts = {
      width: width(el),
      height: height,
      scales: { x: { time: false }, y: { range: function (u, min, max) { return [Math.min(0, min || 0), (max || 1) * 1.05]; } } },
      axes: [
        { label: ownX ? c.xlabel : "elapsed s", stroke: "#5d6b78" },
        { label: c.unit, stroke: "#5d6b78", size: 60 }
      ],
      series: series,
      cursor: { drag: { x: true, y: false } },
      legend: { live: true },
      hooks: { drawClear: ownX ? [] : [shadeWarmup], draw: ownX ? [] : [drawEvents] }
    };
    var u = new uPlot(opts, cols, el);
    u.pgarenaId = c.id;
    window.pgarenaCharts.push(u);
  });

  // pgarenaUpdate redraws the charts from new data of the same shape (a run
  // that grew: pgarena serve's live page). It returns false when the charts
  // or their series changed, and the page must be loaded again.
  window.pgarenaUpdate = function (next) {
    if (next.charts.length !== window.pgarenaCharts.length) return false;
    for (var i = 0; i < next.charts.length; i++) {
      var c = next.charts[i], u = window.pgarenaCharts[i];
      if (c.id !== u.pgarenaId || c.series.length !== u.series.length - 1) return false;
    }
    data = next;
    next.charts.forEach(function (c, i) {
      var cols = [c.x ? c.x : next.x];
      c.series.forEach(function (s) { cols.push(column(s.values)); });
      window.pgarenaCharts[i].setData(cols);
    });
    return true;
  };

  var pending = null;
  window.addEventListener("resize", function () {
    if (pending) cancelAnimationFrame(pending);
    pending = requestAnimationFrame(function () {
      window.pgarenaCharts.forEach(function (u) {
        u.setSize({ width: width(u.root.parentNode), height: height });
      });
    });
  });
  window.pgarenaReady = true;
})();
