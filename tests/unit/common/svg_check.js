/*
 * Runs in headless Chromium on the page output/test_flamegraph_svg.sh writes: each
 * <object class="case"> holds a flame graph, and its data-folded
 * attribute (base64) the folded text it was drawn from.  The checks read
 * the rendered SVG DOM and compare it with the folded text, parsed here
 * independently of the C code; then they drive the viewer (hover, search,
 * click-to-zoom, reset).  The verdict goes into <pre id="result">, which
 * the shell script reads from --dump-dom.
 */
'use strict';

var problems = [];
var notes = [];

function fail(msg) { problems.push(msg); }
function expect(cond, msg) { if (!cond) fail(msg); }

function decode64(b64) {
  var bin = atob(b64), bytes = new Uint8Array(bin.length);
  for (var i = 0; i < bin.length; i++) bytes[i] = bin.charCodeAt(i);
  return new TextDecoder('utf-8').decode(bytes);
}

/* Folded text -> {total, prefixes: Map("a\u0000b" -> inclusive count)}. */
function parseFolded(text) {
  var prefixes = new Map(), total = 0;
  text.split('\n').forEach(function (line) {
    line = line.replace(/\r$/, '');
    if (line === '') return;
    var cut = Math.max(line.lastIndexOf(' '), line.lastIndexOf('\t'));
    var n = Number(line.slice(cut + 1));
    var frames = line.slice(0, cut).split(';');
    total += n;
    for (var d = 1; d <= frames.length; d++) {
      var key = frames.slice(0, d).join('\u0000');
      prefixes.set(key, (prefixes.get(key) || 0) + n);
    }
  });
  return { total: total, prefixes: prefixes };
}

function box(g) {
  var r = g.querySelector('rect').getBBox();
  return { x: r.x, y: r.y, w: r.width, h: r.height };
}

function visible(g) {
  return g.ownerDocument.defaultView.getComputedStyle(g).display !== 'none';
}

function near(a, b) { return Math.abs(a - b) < 0.02; }

/* The stack prefix of every box, found by geometry alone: the parent of
 * a box is the box one level down whose rendered extent covers it. */
function paths(frames) {
  var byDepth = [];
  frames.forEach(function (g) {
    var d = Number(g.getAttribute('data-depth'));
    (byDepth[d] = byDepth[d] || []).push(g);
  });
  var path = new Map();
  for (var d = 1; d < byDepth.length; d++) {
    (byDepth[d] || []).forEach(function (g) {
      var b = box(g), name = g.getAttribute('data-name');
      if (d === 1) { path.set(g, name); return; }
      var under = (byDepth[d - 1] || []).filter(function (p) {
        var pb = box(p);
        return pb.x <= b.x + 0.01 && pb.x + pb.w >= b.x + b.w - 0.01 &&
               near(pb.y, b.y + b.h + 1);
      });
      if (under.length !== 1) {
        fail('box "' + name + '" at depth ' + d + ' sits on ' +
             under.length + ' boxes');
        return;
      }
      path.set(g, path.get(under[0]) + '\u0000' + name);
    });
  }
  return path;
}

function checkTotals(label, doc, folded) {
  var svg = doc.documentElement;
  var frames = Array.prototype.slice.call(doc.querySelectorAll('g.f'));
  var total = Number(svg.getAttribute('data-total'));
  var want = parseFolded(folded);

  expect(total === want.total, label + ': data-total ' + total +
         ' != folded total ' + want.total);
  var roots = frames.filter(function (g) { return g.getAttribute('data-depth') === '0'; });
  expect(roots.length === 1 && Number(roots[0].getAttribute('data-samples')) === want.total,
         label + ': root box is not the total');
  var sum1 = 0;
  frames.forEach(function (g) {
    if (g.getAttribute('data-depth') === '1') sum1 += Number(g.getAttribute('data-samples'));
  });
  expect(sum1 === want.total, label + ': depth-1 boxes sum to ' + sum1 +
         ', folded total is ' + want.total);
  expect(frames.length === want.prefixes.size + 1, label + ': ' +
         (frames.length - 1) + ' boxes for ' + want.prefixes.size + ' stack prefixes');

  var seen = new Set();
  var p = paths(frames);
  var count = svg.getAttribute('data-count-name');
  p.forEach(function (key, g) {
    var n = Number(g.getAttribute('data-samples'));
    var name = g.getAttribute('data-name');
    var pretty = key.split('\u0000').join(';');
    if (!want.prefixes.has(key)) { fail(label + ': box for unknown prefix ' + pretty); return; }
    expect(want.prefixes.get(key) === n, label + ': ' + pretty + ' has ' + n +
           ' samples, folded says ' + want.prefixes.get(key));
    expect(!seen.has(key), label + ': two boxes for ' + pretty);
    seen.add(key);
    var pct = (100 * n / want.total).toFixed(2);
    var title = g.querySelector('title').textContent;
    expect(title === name + ' (' + n + ' ' + count + ', ' + pct + '%)',
           label + ': title "' + title + '"');
    /* Width proportional to samples. */
    var w = box(g).w, W = Number(svg.getAttribute('width')) - 2 * Number(svg.getAttribute('data-xpad'));
    expect(Math.abs(w - W * n / want.total) < 0.02, label + ': ' + pretty + ' width ' + w);
  });
  want.prefixes.forEach(function (n, key) {
    expect(seen.has(key), label + ': no box for ' + key.split('\u0000').join(';'));
  });
  /* Root at the bottom: deeper boxes are higher up. */
  var y0 = box(roots[0]).y;
  frames.forEach(function (g) {
    var d = Number(g.getAttribute('data-depth'));
    expect(near(box(g).y, y0 - d * (box(roots[0]).h + 1)),
           label + ': box at depth ' + d + ' at y ' + box(g).y);
  });
  notes.push(label + ': ' + frames.length + ' boxes, ' + want.total + ' samples');
  return frames;
}

function find(frames, name, depth) {
  var r = frames.filter(function (g) {
    return g.getAttribute('data-name') === name &&
      (depth === undefined || g.getAttribute('data-depth') === String(depth));
  });
  if (r.length !== 1) fail('expected one box "' + name + '", found ' + r.length);
  return r[0];
}

function click(el) {
  el.dispatchEvent(new MouseEvent('click', { bubbles: true, view: el.ownerDocument.defaultView }));
}

/* The viewer on sample.folded: hover, kinds, escaping, search, zoom. */
function checkInteraction(doc, frames) {
  var win = doc.defaultView;
  var svg = doc.documentElement;
  var W = Number(svg.getAttribute('width')), X = Number(svg.getAttribute('data-xpad'));
  var leaf = find(frames, 'c_leaf');
  var outer = find(frames, 'outer @sw.lua:3');
  var inner = find(frames, 'inner @sw.lua:9');
  var trace = find(frames, 'TRACE_3 @payload.lua:5');
  var esc = find(frames, 'check "a<b" && \'c\'>d @esc.lua:1');
  var payload = frames.filter(function (g) { return g.getAttribute('data-name') === 'c_payload'; });
  var details = doc.getElementById('details');
  var matched = doc.getElementById('matched');
  if (!leaf || !outer || !inner || !trace || !esc) return;

  expect(leaf.getAttribute('data-kind') === 'host', 'c_leaf kind ' + leaf.getAttribute('data-kind'));
  expect(outer.getAttribute('data-kind') === 'lua', 'outer kind ' + outer.getAttribute('data-kind'));
  expect(trace.getAttribute('data-kind') === 'trace', 'trace kind ' + trace.getAttribute('data-kind'));
  /* Hues: host warm (red leads), Lua green, trace blue. */
  function rgb(g) { return g.querySelector('rect').getAttribute('fill').match(/\d+/g).map(Number); }
  var h = rgb(leaf), l = rgb(outer), t = rgb(trace);
  expect(h[0] > h[2] && h[0] >= h[1], 'host colour ' + h);
  expect(l[1] > l[0] && l[1] > l[2], 'Lua colour ' + l);
  expect(t[2] > t[0] && t[2] > t[1], 'trace colour ' + t);
  expect(esc.querySelector('title').textContent.indexOf('check "a<b" && \'c\'>d') === 0,
         'escaped name round trip');

  /* Hover. */
  leaf.querySelector('rect').dispatchEvent(new MouseEvent('mouseover', { bubbles: true }));
  expect(details.textContent === 'c_leaf (469 samples, 31.27%)', 'hover shows "' + details.textContent + '"');
  leaf.querySelector('rect').dispatchEvent(new MouseEvent('mouseout', { bubbles: true }));
  expect(details.textContent.trim() === '', 'mouseout clears details');

  /* Search: memcpy is under c_leaf, so the share is c_leaf's alone. */
  win.search('c_leaf|memcpy');
  var hits = frames.filter(function (g) { return g.querySelector('rect').getAttribute('fill') === 'rgb(230,0,230)'; });
  expect(hits.length === 2, 'search highlights ' + hits.length + ' boxes');
  expect(matched.getAttribute('data-samples') === '469', 'matched samples ' + matched.getAttribute('data-samples'));
  expect(matched.textContent.indexOf('Matched: 31.3%') === 0, 'matched text "' + matched.textContent + '"');

  /* Zoom into outer: it spans the width, its subtree scales, the rest
   * hides, its ancestors dim; the search share follows the zoom. */
  click(outer.querySelector('rect'));
  var ob = box(outer), ib = box(inner);
  expect(near(ob.x, X) && near(ob.w, W - 2 * X), 'zoomed box at ' + ob.x + ' width ' + ob.w);
  expect(Math.abs(ib.w - (W - 2 * X) * 557 / 612) < 0.02, 'zoomed child width ' + ib.w);
  expect(payload.length > 0 && payload.every(function (g) { return !visible(g); }), 'c_payload hidden while zoomed');
  expect(find(frames, 'main').classList.contains('parent'), 'ancestor dimmed');
  expect(visible(doc.getElementById('unzoom')), 'Reset Zoom shown');
  expect(matched.getAttribute('data-samples') === '469' &&
         matched.textContent.indexOf('Matched: 76.6%') === 0, 'zoomed match "' + matched.textContent + '"');
  expect(inner.querySelector('text').textContent === 'inner @sw.lua:9', 'zoomed label "' +
         inner.querySelector('text').textContent + '"');

  /* Back. */
  click(doc.getElementById('unzoom'));
  expect(!visible(doc.getElementById('unzoom')), 'Reset Zoom hidden again');
  expect(frames.every(visible), 'every box visible after reset');
  expect(Math.abs(box(outer).w - (W - 2 * X) * 612 / 1500) < 0.02, 'width restored ' + box(outer).w);
  click(doc.getElementById('search'));
  expect(frames.every(function (g) { return g.querySelector('rect').getAttribute('fill') !== 'rgb(230,0,230)'; }),
         'search reset restores colours');
  notes.push('interaction: hover, search, zoom, reset');
}

/* Opened as flame.svg?s=...&z=...: the view comes from the URL. */
function checkUrl(doc, frames) {
  var matched = doc.getElementById('matched');
  var run = find(frames, 'run @sw.lua:20');
  if (!run) return;
  expect(box(run).x < 10.01 && visible(doc.getElementById('unzoom')), 'URL zoom applied');
  expect(matched.getAttribute('data-samples') === '321', 'URL search matched ' + matched.getAttribute('data-samples'));
  /* Shown: the zoomed frame's subtree and its ancestors, nothing else. */
  var s = Number(run.getAttribute('data-start')), e = s + Number(run.getAttribute('data-samples'));
  frames.forEach(function (g) {
    var gs = Number(g.getAttribute('data-start')), ge = gs + Number(g.getAttribute('data-samples'));
    var d = Number(g.getAttribute('data-depth'));
    var want = d < 6 ? gs <= s && ge >= e : gs >= s && ge <= e;
    expect(visible(g) === want, 'URL zoom: ' + g.getAttribute('data-name') + ' visible ' + visible(g));
  });
  var hits = frames.filter(function (g) { return g.classList.contains('match'); });
  expect(hits.length === 4 && hits.every(function (g) { return g.getAttribute('data-name') === 'c_payload'; }),
         'URL search highlights ' + hits.length + ' boxes');
  notes.push('url: zoom and search from the query');
}

function runCase(obj) {
  var label = obj.getAttribute('data-label');
  var doc = obj.contentDocument;
  if (!doc || !doc.documentElement || doc.documentElement.localName !== 'svg') {
    fail(label + ': the SVG did not load');
    return;
  }
  var mode = obj.getAttribute('data-mode');
  var frames = Array.prototype.slice.call(doc.querySelectorAll('g.f'));
  /* A view opened zoomed has other geometry: checked on its own. */
  if (mode === 'url') return checkUrl(doc, frames);
  checkTotals(label, doc, decode64(obj.getAttribute('data-folded')));
  if (mode === 'interact') checkInteraction(doc, frames);
}

function finish() {
  var out = document.getElementById('result');
  out.textContent = problems.length
    ? 'FAIL\n' + problems.join('\n')
    : 'PASS\n' + notes.join('\n');
}

window.addEventListener('load', function () {
  var cases = document.querySelectorAll('object.case');
  for (var i = 0; i < cases.length; i++) {
    try { runCase(cases[i]); } catch (e) { fail(cases[i].getAttribute('data-label') + ': ' + e + '\n' + e.stack); }
  }
  finish();
});
