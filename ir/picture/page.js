// Behaviour of the interactive graph page (nn dot -o graph.html): draws the views
// embedded as JSON in #nn-graph, opens boxes and folds them back (breadcrumbs, Esc),
// hover info, search, the phase/memory colour switch, and pan/zoom of the SVG.
// Plain ES2020 in one script: no imports, nothing fetched, works from file://.
// Keep the character pair "<" + "/" out of this file: it would end the script element.
(function () {
  'use strict';

  const data = JSON.parse(document.getElementById('nn-graph').textContent);
  const items = data.items || {};
  const views = new Map((data.views || []).map((v) => [v.id, v]));
  const home = data.views && data.views.length ? data.views[0].id : null;

  const byId = (id) => document.getElementById(id);
  const viewEl = byId('view'), crumbsEl = byId('crumbs'), searchEl = byId('search');
  const foundEl = byId('found'), colourEl = byId('colour'), infoEl = byId('info');

  const SHAPES = ['polygon', 'path', 'ellipse'];
  const FIT_PAD = 16;      // px of air around a fitted drawing
  const MAX_FIT = 1.5;     // px per drawing unit: a small graph is not blown up past this by fit
  const MAX_ZOOM = 40;     // px per drawing unit, the closest the wheel goes

  let current = null;      // id of the view on screen
  let svg = null;          // its svg element
  let box = null;          // the drawing's own bounds (its viewBox as Graphviz wrote it)
  let cam = null;          // {x, y, upp}: drawing point at the stage centre, drawing units per pixel
  let fitted = true;       // refit on window resize until the user pans or zooms
  let matches = [];        // ids of the items the search finds, in items order
  let matchSet = new Set();
  let marked = new Set();  // views holding a match themselves or somewhere below
  let hit = -1;            // index in matches of the last Enter jump

  // ---- views -------------------------------------------------------------

  // View ids from the overview down to id, following parent links (bounded, in case of a cycle).
  function chain(id) {
    const path = [];
    for (let v = id; v && views.has(v) && path.length <= views.size; v = views.get(v).parent) path.unshift(v);
    return path;
  }

  function show(id) {
    const v = views.get(id);
    if (!v) return;
    current = id;
    const text = v.svg || '';
    const at = text.indexOf('<svg');
    viewEl.innerHTML = at > 0 ? text.slice(at) : text; // tolerate an XML prolog left in
    svg = viewEl.querySelector('svg');
    hideInfo();
    if (svg) prepare(svg);
    document.body.dataset.view = id;
    drawCrumbs();
    paint();
    fit();
  }

  function prepare(s) {
    // Graphviz <title>s would pop up bare ids as browser tooltips over the info panel.
    for (const t of s.querySelectorAll('title')) t.remove();
    const b = s.viewBox.baseVal;
    box = b && b.width > 0 ? { x: b.x, y: b.y, w: b.width, h: b.height }
      : { x: 0, y: 0, w: parseFloat(s.getAttribute('width')) || 100, h: parseFloat(s.getAttribute('height')) || 100 };
    // The svg fills the stage; the camera decides what part of the drawing it shows.
    s.removeAttribute('width');
    s.removeAttribute('height');
    s.setAttribute('preserveAspectRatio', 'xMidYMid meet');
    for (const g of s.querySelectorAll('g.node')) {
      const item = items[g.id];
      if (!item) continue; // e.g. the legend
      const shape = Array.from(g.children).find((c) => SHAPES.includes(c.localName));
      if (shape) {
        shape.classList.add('nn-shape');
        shape.setAttribute('data-fill', shape.getAttribute('fill') || '');
      }
      if (item.open && views.has(item.open)) g.classList.add('nn-open');
    }
  }

  function up() {
    const v = views.get(current);
    if (v && v.parent && views.has(v.parent)) show(v.parent);
  }

  function drawCrumbs() {
    crumbsEl.textContent = '';
    const path = chain(current);
    path.forEach((id, i) => {
      if (i) crumbsEl.append(make('span', 'sep', '›'));
      const name = i === 0 ? 'overview' : views.get(id).name || id;
      const last = i === path.length - 1;
      const el = make(last ? 'span' : 'button', last ? 'here' : '', name);
      el.dataset.view = id;
      if (!last) { el.type = 'button'; el.title = 'back up to ' + name; }
      crumbsEl.append(el);
    });
  }

  function make(tag, cls, text) {
    const el = document.createElement(tag);
    if (cls) el.className = cls;
    if (text !== undefined) el.textContent = text;
    return el;
  }

  // ---- colours and search marks --------------------------------------------

  // Recolours the shapes in place (no re-layout) and sets the search marks of the current view.
  function paint() {
    if (!svg) return;
    const memory = colourEl.value === 'memory';
    let here = 0, boxes = 0;
    for (const g of svg.querySelectorAll('g.node')) {
      const item = items[g.id];
      if (!item) continue;
      const shape = g.querySelector(':scope > .nn-shape');
      const fill = (memory && item.memfill) || item.fill || (shape && shape.getAttribute('data-fill'));
      if (shape && fill) shape.setAttribute('fill', fill);
      const direct = matchSet.has(g.id);
      const inside = !!item.open && marked.has(item.open);
      g.classList.toggle('nn-match', direct || inside);
      g.classList.toggle('nn-current', hit >= 0 && matches[hit] === g.id);
      if (direct) here++;
      else if (inside) boxes++;
    }
    if (!searchEl.value.trim()) foundEl.textContent = '';
    else if (!matches.length) foundEl.textContent = 'no match';
    else foundEl.textContent = here + ' here, ' + (boxes ? boxes + (boxes === 1 ? ' box, ' : ' boxes, ') : '') +
      matches.length + ' in all';
  }

  function search() {
    const q = searchEl.value.trim().toLowerCase();
    matches = [];
    marked = new Set();
    hit = -1;
    if (q) {
      for (const [id, it] of Object.entries(items)) {
        if (!id.toLowerCase().includes(q) && !String(it.label || '').toLowerCase().includes(q)) continue;
        matches.push(id);
        // Mark its view and every view above, so the boxes leading to it light up too.
        for (let v = it.view, n = 0; v && !marked.has(v) && n <= views.size; n++) {
          marked.add(v);
          v = views.has(v) ? views.get(v).parent : null;
        }
      }
    }
    matchSet = new Set(matches);
    paint();
  }

  // Enter: go to the next match, opening the view it is drawn in.
  function jump(step) {
    if (!matches.length) return;
    hit = (hit + step + matches.length) % matches.length;
    const item = items[matches[hit]];
    if (item.view !== current && views.has(item.view)) show(item.view);
    else paint();
    const g = svg && svg.querySelector('#' + CSS.escape(matches[hit]));
    if (g) centre(g);
  }

  // ---- hover info ------------------------------------------------------------

  function human(bytes) {
    const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
    let n = bytes, u = 0;
    while (n >= 1024 && u < units.length - 1) { n /= 1024; u++; }
    const text = u === 0 || n >= 10 || Number.isInteger(n) ? String(Math.round(n)) : n.toFixed(1);
    return text + ' ' + units[u];
  }

  function showInfo(id) {
    const it = items[id];
    infoEl.textContent = '';
    infoEl.append(make('div', 'title', it.label || id));
    const table = document.createElement('table');
    const rows = [['kind', it.kind], ['types', it.types], ['bytes', it.bytes ? human(it.bytes) : ''],
      ['block', it.block], ['where', it.where], ['phase', it.phase]];
    for (const [key, value] of rows) {
      if (!value) continue;
      const tr = table.insertRow();
      tr.append(make('th', '', key));
      tr.insertCell().textContent = value;
    }
    infoEl.append(table);
    if (it.open && views.has(it.open)) {
      const parts = [];
      if (it.count) parts.push(it.count + ' steps');
      if (it.nodes) parts.push(it.nodes + ' nodes');
      parts.push('click to open');
      infoEl.append(make('div', 'open', parts.join(', ')));
    }
    infoEl.hidden = false;
  }

  function hideInfo() { infoEl.hidden = true; }

  // ---- pan and zoom: the camera sets the svg's viewBox --------------------------

  const stage = () => viewEl.getBoundingClientRect();

  function apply() {
    const r = stage();
    if (!svg || !cam || r.width < 1 || r.height < 1) return;
    const w = r.width * cam.upp, h = r.height * cam.upp;
    svg.setAttribute('viewBox', [cam.x - w / 2, cam.y - h / 2, w, h].map((n) => +n.toFixed(3)).join(' '));
  }

  // Units per pixel that show the whole drawing in the stage.
  function wholeUpp(r, pad) {
    return Math.max(box.w / Math.max(1, r.width - 2 * pad), box.h / Math.max(1, r.height - 2 * pad));
  }

  function fit() {
    if (!svg || !box) return;
    cam = { x: box.x + box.w / 2, y: box.y + box.h / 2, upp: Math.max(wholeUpp(stage(), FIT_PAD), 1 / MAX_FIT) };
    fitted = true;
    apply();
  }

  // Zooms by factor k, keeping the drawing point under the client point (cx, cy) in place.
  function zoomAt(cx, cy, k) {
    if (!cam) return;
    const r = stage();
    const dx = cx - (r.left + r.width / 2), dy = cy - (r.top + r.height / 2);
    const ux = cam.x + dx * cam.upp, uy = cam.y + dy * cam.upp;
    const upp = Math.min(Math.max(cam.upp / k, 1 / MAX_ZOOM), 4 * Math.max(wholeUpp(r, 0), 1 / MAX_FIT));
    cam = { x: ux - dx * upp, y: uy - dy * upp, upp };
    fitted = false;
    apply();
  }

  function pan(dx, dy) {
    if (!cam) return;
    cam.x -= dx * cam.upp;
    cam.y -= dy * cam.upp;
    fitted = false;
    apply();
  }

  // Brings a node to the middle, zooming in if it would be too small to read.
  function centre(g) {
    const r = g.getBoundingClientRect(), s = stage();
    pan(s.left + s.width / 2 - (r.left + r.width / 2), s.top + s.height / 2 - (r.top + r.height / 2));
    if (r.height > 0 && r.height < 24) zoomAt(s.left + s.width / 2, s.top + s.height / 2, Math.min(4, 24 / r.height));
  }

  // ---- events ------------------------------------------------------------------

  let drag = null;         // {id, x, y, moved} while the primary button is down on the stage
  let dragged = false;     // the last press was a drag: the click that ends it opens nothing

  viewEl.addEventListener('pointerdown', (e) => {
    dragged = false;
    if (e.button === 0) drag = { id: e.pointerId, x: e.clientX, y: e.clientY, moved: false };
  });
  viewEl.addEventListener('pointermove', (e) => {
    if (!drag || e.pointerId !== drag.id) return;
    const dx = e.clientX - drag.x, dy = e.clientY - drag.y;
    if (!drag.moved) {
      if (Math.abs(dx) + Math.abs(dy) < 4) return; // a shaky click is still a click
      drag.moved = true;
      // Capture only now: capturing on pointerdown would retarget the click away from the box.
      viewEl.setPointerCapture(e.pointerId);
      viewEl.classList.add('dragging');
      hideInfo();
    }
    drag.x = e.clientX;
    drag.y = e.clientY;
    pan(dx, dy);
  });
  const endDrag = (e) => {
    if (!drag || e.pointerId !== drag.id) return;
    dragged = drag.moved;
    drag = null;
    viewEl.classList.remove('dragging');
  };
  viewEl.addEventListener('pointerup', endDrag);
  viewEl.addEventListener('pointercancel', endDrag);

  viewEl.addEventListener('wheel', (e) => {
    e.preventDefault();
    const lines = e.deltaMode === 1 ? 16 : e.deltaMode === 2 ? 400 : 1;
    zoomAt(e.clientX, e.clientY, Math.exp(-e.deltaY * lines * 0.002));
  }, { passive: false });

  viewEl.addEventListener('click', (e) => {
    if (dragged) return;
    const g = e.target.closest('g.node');
    const item = g && items[g.id];
    if (item && item.open && views.has(item.open)) show(item.open);
  });

  viewEl.addEventListener('mouseover', (e) => {
    const g = e.target.closest('g.node');
    if (g && items[g.id] && !(drag && drag.moved)) showInfo(g.id);
  });
  viewEl.addEventListener('mouseout', (e) => {
    const g = e.target.closest('g.node');
    if (g && !(e.relatedTarget && g.contains(e.relatedTarget))) hideInfo();
  });

  crumbsEl.addEventListener('click', (e) => {
    const b = e.target.closest('button[data-view]');
    if (b) show(b.dataset.view);
  });

  searchEl.addEventListener('input', search);
  byId('fit').addEventListener('click', fit);
  colourEl.addEventListener('change', paint);
  window.addEventListener('resize', () => (fitted ? fit() : apply()));

  document.addEventListener('keydown', (e) => {
    if (e.target === searchEl) {
      if (e.key === 'Enter') { e.preventDefault(); jump(e.shiftKey ? -1 : 1); }
      if (e.key === 'Escape') { searchEl.value = ''; search(); searchEl.blur(); }
      return;
    }
    if (e.ctrlKey || e.metaKey || e.altKey || e.target.closest('input, select, textarea')) return;
    if (e.key === 'Escape' || e.key === 'Backspace') { e.preventDefault(); up(); }
    if (e.key === '/') { e.preventDefault(); searchEl.focus(); }
  });

  // ---- start -------------------------------------------------------------------

  byId('name').textContent = data.title || document.title;
  // No memory plan: every memfill is absent, so only the phase colours exist.
  if (!Object.values(items).some((it) => it.memfill)) {
    colourEl.value = 'phase';
    colourEl.disabled = true;
    colourEl.title = 'no memory plan in this graph';
  }
  if (home) show(home);
  // The test (and anyone timing the page) waits for this: the first frame with the picture.
  requestAnimationFrame(() => { window.nnReady = performance.now(); });
})();
