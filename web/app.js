// loazero web app: Play, Analyse, Replay and Dashboard views over the JSON API
// (docs/api.md). Vanilla JavaScript, SVG boards; every request goes to this server only.
'use strict';

const SVGNS = 'http://www.w3.org/2000/svg';
const $ = (id) => document.getElementById(id);

// ---------------------------------------------------------------- API helpers

/** Calls the API; resolves to the parsed JSON or throws an Error with the server's message. */
async function api(path, body) {
  const init = body === undefined ? {} : {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify(body),
  };
  const r = await fetch(path, init);
  let data;
  try { data = await r.json(); } catch (e) { data = { error: r.statusText }; }
  if (!r.ok) throw new Error(data.error || ('HTTP ' + r.status));
  return data;
}

function status(text, isError) {
  const s = $('status');
  s.textContent = text || '';
  s.classList.toggle('error', !!isError);
}

function el(tag, attrs, parent, text) {
  const ns = ['svg', 'g', 'rect', 'circle', 'polygon', 'line', 'text', 'path', 'polyline', 'title'].includes(tag);
  const e = ns ? document.createElementNS(SVGNS, tag) : document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v !== undefined && v !== null) e.setAttribute(k, v);
  }
  if (text !== undefined) e.textContent = text;
  if (parent) parent.appendChild(e);
  return e;
}

function download(filename, text) {
  const url = URL.createObjectURL(new Blob([text], { type: 'text/plain' }));
  const a = el('a', { href: url, download: filename }, document.body);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 1000);
}

const App = { variants: {}, variantList: [], runs: [], players: [] };

// ---------------------------------------------------------------- board drawing

/** Pixel centre of a cell and the cell's outline for a board of the given shape. */
function cellGeometry(board, cell, flip) {
  const n = board.size;
  if (board.shape === 'hex') {
    const r = 26, w = Math.sqrt(3) * r;
    let col = cell.col, row = cell.row;
    let x = col - row / 2 + 2;            // 0..8 across the widest row
    let y = 8 - row;                       // 0 top .. 8 bottom
    if (flip) { x = 8 - x; y = 8 - y; }
    const cx = 20 + w / 2 + x * w, cy = 20 + r + y * 1.5 * r;
    const pts = [];
    for (let i = 0; i < 6; i++) {
      const a = Math.PI / 180 * (60 * i - 30);
      pts.push((cx + r * Math.cos(a)).toFixed(1) + ',' + (cy + r * Math.sin(a)).toFixed(1));
    }
    return { cx, cy, r: r * 0.62, poly: pts.join(' '), width: 40 + 9 * w, height: 40 + 2 * r + 12 * r };
  }
  const s = 56;
  let x = cell.col, y = n - 1 - cell.row;
  if (flip) { x = n - 1 - x; y = n - 1 - y; }
  const x0 = 24 + x * s, y0 = 8 + y * s;
  return { cx: x0 + s / 2, cy: y0 + s / 2, r: s * 0.38, x0, y0, s, width: 32 + n * s, height: 32 + n * s };
}

/**
 * Draws `pos` (a position JSON of the API) into `svg`. `opts`: flip, selected (cell),
 * targets (Set of cells), onClick(cell), overlay (array of {move, percent}), marks.
 */
function drawBoard(svg, pos, opts) {
  opts = opts || {};
  const board = pos.board;
  svg.textContent = '';
  const geo = {};
  let width = 0, height = 0;
  for (const c of board.cells) {
    geo[c.name] = cellGeometry(board, c, opts.flip);
    width = geo[c.name].width; height = geo[c.name].height;
  }
  svg.setAttribute('viewBox', `0 0 ${width} ${height}`);
  svg.dataset.variant = pos.variant;
  svg.dataset.text = pos.text;
  svg.dataset.ply = pos.ply;
  const last = pos.last_move;
  const lastCells = new Set(last ? [last.from, last.to].filter(Boolean) : []);
  const vanished = new Set(pos.vanished || []);
  const cellsG = el('g', { class: 'cells' }, svg);
  for (const c of board.cells) {
    const g = geo[c.name];
    const classes = ['cell'];
    if (board.shape === 'square') classes.push((c.col + c.row) % 2 ? 'light' : 'dark');
    else classes.push('hexcell');
    if (lastCells.has(c.name)) classes.push('last');
    if (opts.selected === c.name) classes.push('selected');
    if (opts.targets && opts.targets.has(c.name)) classes.push('target');
    if (vanished.has(c.name)) classes.push('vanished');
    const grp = el('g', { class: classes.join(' '), 'data-cell': c.name }, cellsG);
    if (board.shape === 'hex') el('polygon', { points: g.poly }, grp);
    else el('rect', { x: g.x0, y: g.y0, width: g.s, height: g.s }, grp);
    const piece = pos.pieces[c.name];
    if (piece) {
      const pc = el('circle', {
        cx: g.cx, cy: g.cy, r: g.r,
        class: 'piece ' + piece.color + (piece.player ? ' ' + piece.player : ''),
        'data-piece': piece.color, 'data-cell': c.name,
        'data-player': piece.player || undefined,
      }, grp);
      pc.dataset.cell = c.name;
      if (piece.player) el('text', { x: g.cx, y: g.cy + 5, class: 'player-letter' }, grp, piece.player[0].toUpperCase());
    }
    if (opts.targets && opts.targets.has(c.name)) el('circle', { cx: g.cx, cy: g.cy, r: 7, class: 'target-dot' }, grp);
    if (opts.onClick) grp.addEventListener('click', () => opts.onClick(c.name));
  }
  // Coordinates.
  const labels = el('g', { class: 'coords' }, svg);
  if (board.shape === 'square') {
    for (const c of board.cells) {
      const g = geo[c.name];
      if (c.row === (opts.flip ? board.size - 1 : 0)) el('text', { x: g.cx, y: g.y0 + g.s + 16 }, labels, c.name[0]);
      if (c.col === (opts.flip ? board.size - 1 : 0)) el('text', { x: 10, y: g.cy + 4 }, labels, c.name.slice(1));
    }
  } else {
    for (const c of board.cells) {
      const g = geo[c.name];
      if (c.name.endsWith('1') && !c.name.endsWith('11')) el('text', { x: g.cx - 36, y: g.cy + 4 }, labels, c.name[0]);
    }
  }
  if (opts.overlay) drawOverlay(svg, geo, opts.overlay);
  svg.dataset.ready = '1';
  return geo;
}

/** Policy overlay: every move an arrow (or ring for drops/removals) with its share. */
function drawOverlay(svg, geo, overlay) {
  const g = el('g', { class: 'overlay' }, svg);
  const max = Math.max(...overlay.map((o) => o.percent), 1);
  const byTarget = {};
  for (const o of overlay) {
    const m = o.move;
    const a = el('g', { class: 'policy-arrow', 'data-move': m.text, 'data-percent': o.percent.toFixed(3) }, g);
    const op = (0.15 + 0.85 * o.percent / max).toFixed(2);
    if (m.from && m.to && geo[m.from] && geo[m.to]) {
      const f = geo[m.from], t = geo[m.to];
      const dx = t.cx - f.cx, dy = t.cy - f.cy, len = Math.hypot(dx, dy) || 1;
      const ex = t.cx - dx / len * 12, ey = t.cy - dy / len * 12;
      el('line', { x1: f.cx, y1: f.cy, x2: ex, y2: ey, 'stroke-width': 2 + 8 * o.percent / max, opacity: op }, a);
      const hx = -dy / len * 7, hy = dx / len * 7;
      el('polygon', { points: `${t.cx},${t.cy} ${ex + hx},${ey + hy} ${ex - hx},${ey - hy}`, opacity: op }, a);
    } else if (m.to && geo[m.to]) {
      const t = geo[m.to];
      el('circle', { cx: t.cx, cy: t.cy, r: t.r + 4, class: 'ring', opacity: op }, a);
    }
    el('title', {}, a, `${m.text}: ${o.percent.toFixed(1)}%`);
    if (m.to) byTarget[m.to] = (byTarget[m.to] || 0) + o.percent;
  }
  // Labels of moves with at least 2%, the likeliest first, each at the first place along
  // its arrow (or beside it) where its box meets no box placed before; a label that finds
  // no free place is left out (its share stays in the arrow's tooltip and the table).
  const placed = [];
  const free = (b) => !placed.some((p) => b.x < p.x + p.w && p.x < b.x + b.w && b.y < p.y + p.h && p.y < b.y + b.h);
  const W = 36, H = 15;
  let left = 0;
  const labelled = overlay.filter((o) => o.percent >= 2 && o.move.to && geo[o.move.to]);
  labelled.sort((a, b) => b.percent - a.percent);
  for (const o of labelled) {
    const m = o.move;
    const t = geo[m.to], f = m.from && geo[m.from] ? geo[m.from] : t;
    const dx = t.cx - f.cx, dy = t.cy - f.cy, len = Math.hypot(dx, dy) || 1;
    const px = -dy / len, py = dx / len;
    let box = null;
    for (const along of [0.66, 0.5, 0.82, 0.35]) {
      for (const side of [0, 1, -1]) {
        const cx = f.cx + dx * along + px * side * (H + 2), cy = f.cy + dy * along + py * side * (H + 2);
        const b = { x: cx - W / 2, y: cy - H / 2, w: W, h: H };
        if (free(b)) { box = b; break; }
      }
      if (box) break;
    }
    if (!box) { left++; continue; }
    placed.push(box);
    const label = el('g', { class: 'policy-label', 'data-move': m.text }, g);
    el('rect', { x: box.x, y: box.y, width: W, height: H, rx: 3 }, label);
    el('text', { x: box.x + W / 2, y: box.y + H / 2 + 4 }, label, o.percent.toFixed(o.percent >= 10 ? 0 : 1) + '%');
  }
  g.dataset.labelsLeftOut = String(left);
}

function resultText(result) {
  if (!result) return '';
  const who = result.winner ? (result.winner[0].toUpperCase() + result.winner.slice(1) + ' wins') : 'Draw';
  return `${who} — ${result.text} (rule: ${result.rule})`;
}

function moveListInto(ol, moves, current, onClick) {
  ol.textContent = '';
  moves.forEach((m, i) => {
    const li = el('li', { class: i + 1 === current ? 'current' : '', 'data-ply': i + 1 }, ol, `${i + 1}. ${m}`);
    if (onClick) li.addEventListener('click', () => onClick(i + 1));
  });
  const cur = ol.querySelector('.current');
  if (cur) cur.scrollIntoView({ block: 'nearest' });
}

/** Click logic shared by Play and Analyse: select a piece, then a target; drops, removals. */
function clickMove(state, pos, cell) {
  const legal = pos.legal || [];
  if (state.selected) {
    const m = legal.find((x) => x.from === state.selected && x.to === cell);
    if (m) { state.selected = null; return m.text; }
    if (cell === state.selected) { state.selected = null; return null; }
  }
  if (legal.some((x) => x.from === cell)) { state.selected = cell; return null; }
  const single = legal.find((x) => !x.from && x.to === cell);
  state.selected = null;
  return single ? single.text : null;
}

function targetsOf(pos, selected) {
  return new Set((pos.legal || []).filter((m) => selected && m.from === selected).map((m) => m.to));
}

function fillVariants(select, value) {
  select.textContent = '';
  for (const v of App.variantList) el('option', { value: v.name }, select, v.name);
  select.value = value || 'standard';
}

// ---------------------------------------------------------------- Play

const Play = {
  game: { variant: 'standard', rules: 'classic', start: null, moves: [] },
  pos: null, selected: null, flip: false, thinking: false, token: 0, lastReplyMs: null,

  init() {
    fillVariants($('play-variant'), App.defaultVariant);
    $('play-variant').addEventListener('change', () => { this.fillOpponents(); this.newGame(); });
    $('play-rules').addEventListener('change', () => this.newGame());
    $('play-side').addEventListener('change', () => { this.flip = $('play-side').value === 'white'; this.refresh(); });
    $('play-opponent').addEventListener('change', () => {
      if ($('play-opponent').value) $('play-spec').value = $('play-opponent').value;
    });
    $('play-new').addEventListener('click', () => this.newGame());
    $('play-undo').addEventListener('click', () => this.undo());
    $('play-flip').addEventListener('click', () => { this.flip = !this.flip; this.draw(); });
    $('play-pass').addEventListener('click', () => this.human('pass'));
    $('play-sgf').addEventListener('click', () => this.exportGame('sgf'));
    $('play-record').addEventListener('click', () => this.exportGame('record'));
    $('play-analyse').addEventListener('click', () => Analyse.open(this.game, this.game.moves.length));
    this.newGame();
  },

  fillOpponents() {
    const sel = $('play-opponent');
    const keep = sel.value;
    sel.textContent = '';
    el('option', { value: '' }, sel, '(custom spec)');
    const specs = [];
    const add = (group, spec, label) => {
      if (specs.includes(spec)) return;
      specs.push(spec);
      el('option', { value: spec }, group, label);
    };
    for (const r of App.runs.filter((x) => x.variant === $('play-variant').value)) {
      // Calibrated levels: the players of the run's last rating round, each played as it
      // was rated (a model at the rating's simulations), weakest first, with its Elo.
      if ((r.levels || []).length) {
        const g = el('optgroup', { label: `${r.name}: rated levels, weakest first (Elo, random = 0; ± is the 95% interval)` }, sel);
        for (const l of r.levels) {
          const pm = l.interval == null ? '' : ` ± ${l.interval.toFixed(0)}`;
          add(g, l.spec, `${r.name}: ${l.name} · Elo ${l.elo.toFixed(0)}${pm}`);
        }
      }
      // The run's strongest players at Play's time per move (not rated at that time): the
      // best model by the ratings, the model its self-play plays now when that is another
      // one, the newest learned alpha-beta, and UBFM on the best network.
      const g = el('optgroup', { label: `${r.name}: at the time per move (not rated at it)` }, sel);
      const rated = r.models.find((m) => m.name === r.best);
      const current = r.models.find((m) => m.name === r.current);
      const best = rated || current || r.models[r.models.length - 1];
      const learned = (r.learned || []).slice().reverse();
      if (learned.length) add(g, learned[0].spec, `${r.name}: learned alpha-beta ${learned[0].name}`);
      if (rated) add(g, rated.spec, `${r.name}: best model ${rated.name} (by its ratings)`);
      if (current && current !== rated) add(g, current.spec, `${r.name}: ${r.current_label} model ${current.name}`);
      if (best && !rated && !current) add(g, best.spec, `${r.name}: newest model ${best.name}`);
      // The same network's values searched by best-first minimax instead of MCTS.
      if (best) add(g, best.spec.replace(/^model:/, 'ubfm:'), `${r.name}: UBFM on ${best.name}`);
    }
    // The built-in players of the registry (GET /api/players) not listed above.
    const builtIn = el('optgroup', { label: 'built-in players' }, sel);
    for (const k of App.players.filter((x) => x.served)) for (const o of k.opponents) add(builtIn, o.spec, o.label);
    sel.value = specs.includes(keep) ? keep : 'alphabeta:depth=1';
    if (sel.value !== keep) $('play-spec').value = sel.value;
  },

  humanSide(pos) {
    const side = $('play-side').value;
    if (side === 'both') return true;
    if (side === 'none') return false;
    return pos.to_move === side;
  },

  async newGame() {
    this.game = { variant: $('play-variant').value, rules: $('play-rules').value || 'classic', start: null, moves: [] };
    this.selected = null;
    this.token++;
    this.thinking = false;
    $('play-info').textContent = '';
    await this.refresh();
  },

  async refresh() {
    try {
      this.pos = await api('/api/position', this.game);
      status('');
    } catch (e) { status(e.message, true); return; }
    this.draw();
    this.maybeReply();
  },

  draw() {
    const pos = this.pos;
    if (!pos) return;
    drawBoard($('play-board'), pos, {
      flip: this.flip, selected: this.selected, targets: targetsOf(pos, this.selected),
      onClick: (c) => this.click(c),
    });
    const res = $('play-result');
    res.hidden = !pos.result;
    res.textContent = resultText(pos.result);
    const who = pos.player ? `${pos.player} (${pos.to_move})` : pos.to_move;
    let turn = pos.result ? 'Game over' : `${who} to move` + (pos.drop_pending ? ' — drop a piece' : '');
    if (pos.reserve) turn += ` · reserves black ${pos.reserve.black}, white ${pos.reserve.white}`;
    if (this.thinking) turn += ' · opponent thinking…';
    $('play-turn').textContent = turn;
    $('play-pass').hidden = !(pos.legal.length === 1 && pos.legal[0].kind === 'pass' && this.humanSide(pos));
    moveListInto($('play-moves'), this.game.moves, this.game.moves.length);
    $('play-board').dataset.thinking = this.thinking ? '1' : '0';
    $('play-board').dataset.moves = this.game.moves.join(' ');
  },

  click(cell) {
    const pos = this.pos;
    if (!pos || pos.result || this.thinking || !this.humanSide(pos)) return;
    const mv = clickMove(this, pos, cell);
    if (mv) this.human(mv); else this.draw();
  },

  async human(mv) {
    this.game.moves.push(mv);
    this.clickedAt = performance.now();
    await this.refresh();
  },

  async maybeReply() {
    const pos = this.pos;
    if (!pos || pos.result || this.thinking || this.humanSide(pos)) return;
    const token = this.token;
    this.thinking = true;
    this.draw();
    const ms = Math.max(10, Math.min(30000, parseInt($('play-ms').value, 10) || 1000));
    let replied = false;
    try {
      const reply = await api('/api/play', Object.assign({}, this.game, { player: $('play-spec').value, ms }));
      if (token !== this.token) return;
      this.game.moves.push(reply.move.text);
      this.pos = reply.position;
      replied = true;
      $('play-info').textContent = `${reply.player}: ${reply.move.text} in ${reply.time_ms.toFixed(0)} ms` + (reply.info ? ` — ${infoText(reply.info)}` : '');
      status('');
    } catch (e) {
      if (token === this.token) status(e.message, true);
    } finally {
      if (token === this.token) this.thinking = false;
    }
    if (token !== this.token) return;
    this.draw();
    if (replied && this.clickedAt) {
      // Click on the target square to the reply drawn on the board.
      this.lastReplyMs = performance.now() - this.clickedAt;
      this.clickedAt = null;
      $('play-board').dataset.replyMs = this.lastReplyMs.toFixed(1);
    }
    this.maybeReply();
  },

  async undo() {
    this.token++;
    this.thinking = false;
    const side = $('play-side').value;
    const moves = this.game.moves;
    if (!moves.length) return;
    // Back to the last position where it was the human's turn, before at least one move.
    let target = moves.length - 1;
    if (side === 'black' || side === 'white') {
      while (target > 0) {
        const p = await api('/api/position', Object.assign({}, this.game, { moves: moves.slice(0, target) }));
        if (p.to_move === side && !p.drop_pending) break;
        target--;
      }
    }
    this.game.moves = moves.slice(0, target);
    this.selected = null;
    this.pos = await api('/api/position', this.game);
    this.draw();
  },

  async exportGame(format) {
    const opp = $('play-spec').value;
    const side = $('play-side').value;
    const names = { black: side === 'black' ? 'human' : opp, white: side === 'white' ? 'human' : opp };
    try {
      const r = await api('/api/export', Object.assign({}, this.game, { format }, names));
      download(r.filename, r.text);
    } catch (e) { status(e.message, true); }
  },
};

// ---------------------------------------------------------------- Analyse

const Analyse = {
  game: null,
  ply: 0, pos: null, selected: null, flip: false, editing: false, paint: 'b', token: 0, result: null,

  init() {
    fillVariants($('an-variant'), App.defaultVariant);
    $('an-variant').addEventListener('change', () => this.setGame({ variant: $('an-variant').value, rules: $('an-rules').value, start: null, moves: [] }, 0));
    $('an-model').addEventListener('change', () => this.analyse());
    $('an-rules').addEventListener('change', () => this.setGame(Object.assign({}, this.game, { rules: $('an-rules').value }), this.ply));
    $('an-first').addEventListener('click', () => this.go(0));
    $('an-prev').addEventListener('click', () => this.go(this.ply - 1));
    $('an-next').addEventListener('click', () => this.go(this.ply + 1));
    $('an-last').addEventListener('click', () => this.go(this.game.moves.length));
    $('an-flip').addEventListener('click', () => { this.flip = !this.flip; this.draw(); });
    $('an-go').addEventListener('click', () => this.analyse());
    $('an-set').addEventListener('click', () => this.setGame({ variant: $('an-variant').value, rules: $('an-rules').value, start: $('an-text').value, moves: [] }, 0));
    $('an-edit').addEventListener('click', () => this.toggleEdit());
    this.setGame({ variant: App.defaultVariant, rules: 'classic', start: null, moves: [] }, 0);
  },

  fillModels() {
    const sel = $('an-model');
    const keep = sel.value;
    sel.textContent = '';
    el('option', { value: 'heuristic' }, sel, 'heuristic evaluator (no network)');
    let first = null;
    const variant = this.game ? this.game.variant : App.defaultVariant;
    for (const r of App.runs.filter((x) => x.variant === variant)) {
      const models = r.models.slice().reverse();
      for (const m of models) {
        const mark = m.name === r.best ? ' (best by ratings)' : m.name === r.current ? ` (${r.current_label})` : '';
        el('option', { value: m.path }, sel, `${r.name}: ${m.name}${mark}`);
        if (!first && m.name === r.best) first = m.path;
      }
      if (!first && models.length) first = models[0].path;
    }
    sel.value = keep && [...sel.options].some((o) => o.value === keep) ? keep : (first || 'heuristic');
    // Alpha-beta's leaf evaluation: the runs' learned ones (the newest promoted first), or
    // the hand-written one.
    const ev = $('an-abeval');
    const keepEval = ev.value;
    ev.textContent = '';
    let firstEval = null;
    for (const r of App.runs.filter((x) => x.variant === variant)) {
      for (const l of (r.learned || []).slice().reverse()) {
        el('option', { value: l.path }, ev, `${r.name}: learned ${l.name}`);
        if (!firstEval) firstEval = l.path;
      }
    }
    el('option', { value: 'hand-written' }, ev, 'hand-written evaluation');
    ev.value = keepEval && [...ev.options].some((o) => o.value === keepEval) ? keepEval : (firstEval || 'hand-written');
  },

  open(game, ply) {
    location.hash = '#analyse';
    this.setGame({ variant: game.variant, rules: game.rules, start: game.start, moves: game.moves.slice() }, ply);
  },

  async setGame(game, ply) {
    const changed = !this.game || this.game.variant !== game.variant;
    this.game = game;
    if (changed) this.fillModels();
    this.ply = Math.max(0, Math.min(ply, game.moves.length));
    $('an-variant').value = game.variant || 'standard';
    $('an-rules').value = game.rules || 'classic';
    await this.go(this.ply);
  },

  current() {
    return { variant: this.game.variant, rules: this.game.rules, start: this.game.start, moves: this.game.moves.slice(0, this.ply) };
  },

  async go(ply) {
    ply = Math.max(0, Math.min(ply, this.game.moves.length));
    this.ply = ply;
    this.selected = null;
    const game = this.game;
    let pos;
    try {
      pos = await api('/api/position', this.current());
      status('');
    } catch (e) { status(e.message, true); return; }
    if (game !== this.game || ply !== this.ply) return; // a later step is on its way
    this.pos = pos;
    $('an-text').value = this.pos.text;
    $('an-ply').textContent = `ply ${ply} / ${this.game.moves.length}`;
    this.result = null;
    this.draw();
    if (App.view === 'analyse' && !this.editing) this.analyse();
  },

  draw() {
    if (!this.pos) return;
    const overlay = this.result && this.result.position.text === this.pos.text && this.result.ply === this.ply
      ? this.result.policy : null;
    drawBoard($('analyse-board'), this.pos, {
      flip: this.flip, selected: this.selected, targets: targetsOf(this.pos, this.selected),
      onClick: (c) => this.click(c), overlay,
    });
    $('analyse-board').dataset.analysed = overlay ? '1' : '0';
  },

  click(cell) {
    if (this.editing) { this.editCell(cell); return; }
    if (!this.pos || this.pos.result) return;
    const mv = clickMove(this, this.pos, cell);
    if (mv) {
      const moves = this.game.moves.slice(0, this.ply);
      moves.push(mv);
      this.game = Object.assign({}, this.game, { moves });
      this.go(moves.length);
    } else this.draw();
  },

  async analyse() {
    if (!this.pos) return;
    const token = ++this.token;
    if (this.pos.result) {
      $('an-value').textContent = resultText(this.pos.result);
      $('an-mcts').textContent = ''; $('an-ab').textContent = ''; $('an-policy').textContent = '';
      return;
    }
    $('an-value').textContent = 'analysing…';
    const body = Object.assign(this.current(), {
      model: $('an-model').value,
      sims: parseInt($('an-sims').value, 10) || 400,
      ab_ms: parseInt($('an-abms').value, 10) || 300,
      ab_eval: $('an-abeval').value || 'hand-written',
    });
    try {
      const r = await api('/api/analyse', body);
      if (token !== this.token) return;
      r.ply = this.ply;
      this.result = r;
      this.showResult(r);
      this.draw();
      status('');
    } catch (e) {
      if (token === this.token) { status(e.message, true); $('an-value').textContent = e.message; }
    }
  },

  showResult(r) {
    const v = $('an-value');
    v.textContent = '';
    el('div', {}, v, `${r.to_move} to move · evaluator ${r.evaluator.split('/').slice(-3).join('/')}`);
    // The value as a bar between the side to move and its opponent, not as probabilities:
    // the network's win/draw/loss head learns search values blended with results, so its
    // draw share (about half at the start) is not how often games are drawn (about 1%).
    const other = r.to_move === 'black' ? 'white' : 'black';
    const share = (Math.max(-1, Math.min(1, r.value)) + 1) / 2;
    const bar = el('div', { class: 'value-bar', title: 'value for the side to move, −1 (lost) … +1 (won); not a probability' }, v);
    const sign = (x) => (x >= 0 ? '+' : '−') + Math.abs(x).toFixed(2);
    el('div', { class: 'value-mover' }, bar, `${r.to_move} ${sign(r.value)}`).style.flexGrow = String(Math.max(share, 0.02));
    el('div', { class: 'value-other' }, bar, `${other} ${sign(-r.value)}`).style.flexGrow = String(Math.max(1 - share, 0.02));
    el('div', {}, v, `value ${r.value.toFixed(3)} (for the side to move, −1 … +1) · MCTS root value ${r.mcts.value.toFixed(3)}`);
    const t = $('an-mcts');
    t.textContent = '';
    const h = el('tr', {}, t);
    for (const c of ['move', 'visits', 'Q', 'prior']) el('th', {}, h, c);
    for (const m of r.mcts.top) {
      const tr = el('tr', {}, t);
      el('td', {}, tr, m.move.text + (m.proof ? ` (${m.proof})` : ''));
      el('td', {}, tr, String(m.visits));
      el('td', {}, tr, m.q.toFixed(3));
      el('td', {}, tr, (m.prior * 100).toFixed(1) + '%');
    }
    el('caption', {}, t, `${r.mcts.simulations} simulations in ${r.mcts.ms.toFixed(0)} ms`);
    const ab = r.alphabeta;
    $('an-ab').textContent = `${ab.eval} evaluation · score ${ab.score_text} · depth ${ab.depth} · ${ab.nodes} nodes in ${ab.ms.toFixed(0)} ms · PV ${ab.pv.join(' ')}`;
    const p = $('an-policy');
    p.textContent = '';
    const ph = el('tr', {}, p);
    el('th', {}, ph, 'move'); el('th', {}, ph, 'policy');
    let sum = 0;
    for (const m of r.policy) {
      sum += m.percent;
      const tr = el('tr', {}, p);
      el('td', {}, tr, m.move.text);
      el('td', {}, tr, m.percent.toFixed(1) + '%');
    }
    el('caption', {}, p, `${r.policy.length} legal moves, total ${sum.toFixed(1)}%`);
  },

  // Position editor: click cells to paint pieces with the chosen letter.
  toggleEdit() {
    this.editing = !this.editing;
    $('an-edit').textContent = this.editing ? 'Done editing' : 'Edit board';
    const pal = $('an-palette');
    pal.hidden = !this.editing;
    pal.textContent = '';
    if (!this.editing) { this.setGame(Object.assign({}, this.game, { start: $('an-text').value, moves: [] }), 0); return; }
    const v = this.game.variant;
    const letters = v === 'ambiloa' ? ['s', 'w', 'n', 'e'] : ['b', 'w'];
    if (v === 'gemma') letters.push('x');
    letters.push('.');
    for (const l of letters) {
      const b = el('button', { class: l === this.paint ? 'on' : '', 'data-paint': l }, pal, l === '.' ? 'empty' : l);
      b.addEventListener('click', () => { this.paint = l; this.toggleEdit(); this.toggleEdit(); });
    }
    this.result = null;
    this.draw();
  },

  editCell(cell) {
    const grid = textToGrid(this.pos.board, $('an-text').value);
    if (!grid) return;
    grid.cells[cell] = this.paint === '.' ? null : this.paint;
    const text = gridToText(this.pos.board, grid);
    $('an-text').value = text;
    // Show it at once; invalid intermediate positions only fail when applied.
    api('/api/position', { variant: this.game.variant, rules: this.game.rules, start: text, moves: [] })
      .then((p) => { this.pos = p; this.draw(); status(''); })
      .catch((e) => status(e.message, true));
  },
};

/** Rows of a board as position text writes them: top row first, cells left to right. */
function textRows(board) {
  const rows = {};
  for (const c of board.cells) (rows[c.row] = rows[c.row] || []).push(c);
  return Object.keys(rows).map(Number).sort((a, b) => b - a).map((r) => rows[r].sort((a, b) => a.col - b.col));
}

function textToGrid(board, text) {
  const parts = text.trim().split(/\s+/);
  const rows = textRows(board);
  const boardRows = (parts[0] || '').split('/');
  if (boardRows.length !== rows.length) return null;
  const cells = {};
  rows.forEach((row, i) => {
    let k = 0;
    for (const ch of boardRows[i]) {
      if (/[0-9]/.test(ch)) { for (let j = 0; j < Number(ch); j++) if (row[k]) cells[row[k++].name] = null; }
      else if (row[k]) cells[row[k++].name] = ch;
    }
  });
  return { cells, rest: parts.slice(1).join(' ') };
}

function gridToText(board, grid) {
  const out = textRows(board).map((row) => {
    let s = '', empty = 0;
    for (const c of row) {
      const l = grid.cells[c.name];
      if (!l) { empty++; continue; }
      if (empty) { s += empty; empty = 0; }
      s += l;
    }
    return s + (empty ? empty : '');
  });
  return out.join('/') + ' ' + grid.rest;
}

// ---------------------------------------------------------------- Replay

const Replay = {
  game: null, ply: 0, pos: null, offset: 0, limit: 40, total: 0, info: null,

  init() {
    $('rp-run').addEventListener('change', () => { this.offset = 0; this.list(); });
    $('rp-kind').addEventListener('change', () => { this.offset = 0; this.list(); });
    $('rp-page-prev').addEventListener('click', () => { this.offset = Math.max(0, this.offset - this.limit); this.list(); });
    $('rp-page-next').addEventListener('click', () => { if (this.offset + this.limit < this.total) { this.offset += this.limit; this.list(); } });
    $('rp-first').addEventListener('click', () => this.go(0));
    $('rp-prev').addEventListener('click', () => this.go(this.ply - 1));
    $('rp-next').addEventListener('click', () => this.go(this.ply + 1));
    $('rp-last').addEventListener('click', () => this.go(this.game ? this.game.moves.length : 0));
    $('rp-analyse').addEventListener('click', () => { if (this.game) Analyse.open(this.game, this.ply); });
    $('rp-file').addEventListener('change', async (ev) => {
      const f = ev.target.files[0];
      if (f) this.importText(await f.text(), f.name);
    });
    $('rp-load').addEventListener('click', () => this.importText($('rp-paste').value, 'pasted game'));
    document.addEventListener('keydown', (ev) => {
      if (App.view !== 'replay' && App.view !== 'analyse') return;
      if (['INPUT', 'TEXTAREA', 'SELECT'].includes(document.activeElement.tagName)) return;
      const v = App.view === 'replay' ? this : Analyse;
      const n = v.game ? v.game.moves.length : 0;
      const k = { ArrowLeft: v.ply - 1, ArrowRight: v.ply + 1, Home: 0, End: n }[ev.key];
      if (k !== undefined) { ev.preventDefault(); v.go(k); }
    });
  },

  fillRuns() {
    for (const id of ['rp-run', 'db-run']) {
      const sel = $(id);
      const keep = sel.value;
      sel.textContent = '';
      for (const r of App.runs) el('option', { value: r.name }, sel, `${r.name} (${r.dir})`);
      if (keep) sel.value = keep;
    }
  },

  async list() {
    const run = $('rp-run').value;
    const t = $('rp-games');
    if (!run) { t.textContent = ''; el('tr', {}, t).appendChild(el('td', {}, null, 'No run directory served (start with --dir RUN_DIR).')); return; }
    try {
      const r = await api(`/api/runs/${encodeURIComponent(run)}/games?kind=${$('rp-kind').value}&offset=${this.offset}&limit=${this.limit}`);
      this.total = r.total;
      if (!this.game && !this.loads && r.games.length) this.openRunGame(run, r.games[0]);
      $('rp-page').textContent = r.total ? `${this.offset + 1}–${this.offset + r.games.length} of ${r.total}` : 'no games';
      t.textContent = '';
      const h = el('tr', {}, t);
      for (const c of ['game', 'kind', 'black', 'white', 'result', 'plies']) el('th', {}, h, c);
      for (const g of r.games) {
        const tr = el('tr', { class: 'game-row', 'data-path': g.path, 'data-kind': g.kind }, t);
        el('td', {}, tr, g.label);
        el('td', {}, tr, g.kind);
        el('td', {}, tr, shortPlayer(g.black));
        el('td', {}, tr, shortPlayer(g.white));
        el('td', {}, tr, (g.result || '?') + (g.detail ? ` (${g.detail})` : ''));
        el('td', {}, tr, g.plies === null || g.plies === undefined ? '' : String(g.plies));
        tr.addEventListener('click', () => this.openRunGame(run, g));
      }
    } catch (e) { status(e.message, true); }
  },

  // Every load counts; only the latest one requested is shown (no race between a slow
  // load and a later one).
  async openRunGame(run, g) {
    const load = this.loads = (this.loads || 0) + 1;
    try {
      const r = await api(`/api/runs/${encodeURIComponent(run)}/game?path=${encodeURIComponent(g.path)}`);
      if (load === this.loads) this.show(r, `${g.label} · ${g.kind}`);
    } catch (e) { status(e.message, true); }
  },

  async importText(text, name) {
    const load = this.loads = (this.loads || 0) + 1;
    try {
      const r = await api('/api/import', { text });
      if (load === this.loads) this.show(r, name);
      status('');
    } catch (e) { status(e.message, true); }
  },

  show(r, title) {
    this.info = r;
    this.game = { variant: r.variant, rules: r.rules, start: r.start, moves: r.moves };
    $('rp-title').textContent = `${title} — black: ${shortPlayer(r.black) || '?'}, white: ${shortPlayer(r.white) || '?'}`;
    const res = $('rp-result');
    res.hidden = !r.result;
    res.textContent = resultText(r.result);
    this.go(r.moves.length);
  },

  async go(ply) {
    if (!this.game) return;
    ply = Math.max(0, Math.min(ply, this.game.moves.length));
    this.ply = ply;
    const game = this.game;
    let pos;
    try {
      pos = await api('/api/position', Object.assign({}, game, { moves: game.moves.slice(0, ply) }));
    } catch (e) { status(e.message, true); return; }
    if (game !== this.game || ply !== this.ply) return; // a later step is on its way
    this.pos = pos;
    drawBoard($('replay-board'), this.pos, {});
    $('rp-ply').textContent = `ply ${ply} / ${this.game.moves.length}`;
  },
};

function shortPlayer(s) {
  if (!s) return s;
  return s.replace(/(model|ubfm):path=([^,]*\/)?([^,/]+)\.safetensors/, '$1 $3');
}

// ---------------------------------------------------------------- Dashboard

const Dashboard = {
  timer: null,

  init() {
    $('db-run').addEventListener('change', () => this.update());
  },

  start() {
    this.update();
    if (!this.timer) this.timer = setInterval(() => { if (App.view === 'dashboard') this.update(); }, 5000);
  },

  async update() {
    const run = $('db-run').value;
    if (!run) { $('db-phase').textContent = 'No run directory served (start with --dir RUN_DIR).'; return; }
    let m;
    try { m = await api(`/api/runs/${encodeURIComponent(run)}/metrics`); } catch (e) { status(e.message, true); return; }
    const s = m.state || {};
    const elapsed = s.elapsed_s ? `${(s.elapsed_s / 60).toFixed(1)} min` : '?';
    $('db-phase').textContent = s.phase ? Dashboard.phaseText(m, s, elapsed) : 'no state.json yet';
    const age = m.state_age_s === null || m.state_age_s === undefined ? '' : ` · state.json written ${fmtAge(m.state_age_s)} ago`;
    $('db-updated').textContent = 'updated ' + new Date().toLocaleTimeString() + age;
    this.elo(m);
    this.charts(m);
    const box = $('db-models');
    box.textContent = '';
    for (const md of m.models.slice().reverse()) {
      const b = el('button', { class: 'model', 'data-spec': md.spec }, box, md.name);
      b.addEventListener('click', () => { location.hash = '#play'; $('play-spec').value = md.spec; });
    }
    $('db-elo').dataset.points = String(m.elo.length);
  },

  /** Where the run stands: finished (and why) or its phase; its best model by its
   * ratings; the model its self-play plays (`newest` without a gate). */
  phaseText(m, s, elapsed) {
    const why = { 'time-budget': 'time budget used', generations: 'all generations done' };
    const stop = m.stop;
    const where = !stop ? `generation ${s.generation} · phase ${s.phase}`
      : stop.finished ? `finished after generation ${stop.generation} (${why[stop.reason] || stop.reason})`
        : `stopped after generation ${stop.generation} (${stop.reason}; resumes when started again)`;
    const b = m.best;
    const best = b ? `best by ratings ${b.name} (${b.elo.toFixed(0)}${b.stderr ? ' ± ' + (1.96 * b.stderr).toFixed(0) : ''} Elo)` : 'no model rated yet';
    const current = m.current && (!b || m.current.name !== b.name) ? ` · ${m.current.label} ${m.current.name}` : '';
    return `${where} · ${best}${current} · promoted ${s.promoted}, rejected ${s.rejected} · training time ${elapsed}`;
  },

  elo(m) {
    const pts = m.elo.filter((p) => p.elapsed_s !== null && p.elo !== null);
    // ± is a 95% interval everywhere (1.96 standard errors), as in the header and the plots.
    const series = [{ name: 'Elo', cls: 'elo', points: pts.map((p) => ({ x: p.elapsed_s / 60, y: p.elo, err: 1.96 * p.stderr, label: p.name })) }];
    chart($('db-elo'), series, { xlabel: 'training time (min)', ylabel: 'Elo', hlines: m.anchors.map((a) => ({ y: a.elo, label: a.name })) });
  },

  /** Every chart of the run's metrics view (`m.charts`, the lines `loazero plot` draws):
   * one figure per chart, and one more for the lines of its right axis. */
  charts(m) {
    const box = $('db-charts');
    for (const c of m.charts || []) {
      for (const axis of ['left', 'right']) {
        const lines = c.lines.filter((l) => l.axis === axis);
        if (axis === 'right' && !lines.length) continue;
        const id = `db-${c.key}-${axis}`;
        let svg = document.getElementById(id);
        if (!svg) {
          const fig = el('figure', {}, box);
          el('figcaption', {}, fig, axis === 'left' ? c.title : `${c.title}: ${c.right_label}`);
          svg = el('svg', { id, class: 'chart', 'data-chart': c.key }, fig);
        }
        const series = lines.map((l, i) => ({
          name: l.label, cls: 's' + (i % 6), key: l.key, points: l.points.map(([x, y]) => ({ x, y })),
        }));
        chart(svg, series, { xlabel: c.x_label, ylabel: axis === 'left' ? c.y_label : c.right_label, lines: true });
      }
    }
  },
};

/** A scatter/line chart with axes, optional error bars (`err`) and horizontal lines. */
function chart(svg, series, opts) {
  const W = 560, H = 300, L = 56, R = 150, T = 12, B = 40;
  svg.textContent = '';
  svg.setAttribute('viewBox', `0 0 ${W} ${H}`);
  const all = series.flatMap((s) => s.points);
  const hl = opts.hlines || [];
  if (!all.length) { el('text', { x: W / 2, y: H / 2, class: 'empty' }, svg, 'no data yet'); return; }
  let x0 = Math.min(...all.map((p) => p.x)), x1 = Math.max(...all.map((p) => p.x));
  let y0 = Math.min(...all.map((p) => p.y - (p.err || 0)), ...hl.map((h) => h.y));
  let y1 = Math.max(...all.map((p) => p.y + (p.err || 0)), ...hl.map((h) => h.y));
  if (x1 === x0) { x1 += 1; x0 -= 1; }
  if (y1 === y0) { y1 += 1; y0 -= 1; }
  const pad = (y1 - y0) * 0.05; y0 -= pad; y1 += pad;
  const sx = (x) => L + (x - x0) / (x1 - x0) * (W - L - R);
  const sy = (y) => T + (1 - (y - y0) / (y1 - y0)) * (H - T - B);
  const axes = el('g', { class: 'axes' }, svg);
  el('line', { x1: L, y1: H - B, x2: W - R, y2: H - B }, axes);
  el('line', { x1: L, y1: T, x2: L, y2: H - B }, axes);
  for (let i = 0; i <= 4; i++) {
    const xv = x0 + (x1 - x0) * i / 4, yv = y0 + (y1 - y0) * i / 4;
    el('text', { x: sx(xv), y: H - B + 16, class: 'tick' }, axes, niceNum(xv));
    el('text', { x: L - 6, y: sy(yv) + 4, class: 'tick ytick' }, axes, niceNum(yv));
    el('line', { x1: L, y1: sy(yv), x2: W - R, y2: sy(yv), class: 'grid' }, axes);
  }
  el('text', { x: (L + W - R) / 2, y: H - 6, class: 'axis-label' }, axes, opts.xlabel);
  el('text', { x: 12, y: T + 10, class: 'axis-label ylabel' }, axes, opts.ylabel);
  for (const h of hl) {
    const g = el('g', { class: 'anchor', 'data-anchor': h.label }, svg);
    el('line', { x1: L, y1: sy(h.y), x2: W - R, y2: sy(h.y) }, g);
    el('text', { x: W - R + 4, y: sy(h.y) + 4 }, g, `${shortPlayer(h.label)} ${h.y.toFixed(0)}`);
  }
  series.forEach((s, i) => {
    const g = el('g', { class: 'series ' + s.cls }, svg);
    if (opts.lines && s.points.length > 1) {
      el('polyline', { points: s.points.map((p) => `${sx(p.x).toFixed(1)},${sy(p.y).toFixed(1)}`).join(' ') }, g);
    }
    for (const p of s.points) {
      if (p.err) el('line', { x1: sx(p.x), x2: sx(p.x), y1: sy(p.y - p.err), y2: sy(p.y + p.err), class: 'errbar' }, g);
      if (!opts.lines || p.err !== undefined) {
        const c = el('circle', { cx: sx(p.x), cy: sy(p.y), r: 4, class: 'point elo-point', 'data-label': p.label }, g);
        el('title', {}, c, `${p.label || ''} ${p.y.toFixed(1)}${p.err ? ' ± ' + p.err.toFixed(0) : ''}`);
      }
    }
    if (opts.lines || series.length > 1) {
      el('text', { x: W - R + 4, y: T + 14 + 16 * i, class: 'legend ' + s.cls }, svg, s.name);
    }
  });
}

function fmtAge(s) {
  if (s < 90) return `${s.toFixed(0)} s`;
  if (s < 5400) return `${(s / 60).toFixed(0)} min`;
  return `${(s / 3600).toFixed(1)} h`;
}

function niceNum(v) {
  const a = Math.abs(v);
  if (a >= 1000) return v.toFixed(0);
  if (a >= 10) return v.toFixed(0);
  if (a >= 1) return v.toFixed(1);
  return v.toFixed(2);
}

// ---------------------------------------------------------------- views and start

function showView() {
  const v = (location.hash || '#play').slice(1);
  App.view = ['play', 'analyse', 'replay', 'dashboard'].includes(v) ? v : 'play';
  for (const s of document.querySelectorAll('.view')) s.hidden = s.id !== 'view-' + App.view;
  for (const a of document.querySelectorAll('nav a')) a.classList.toggle('active', a.dataset.view === App.view);
  if (App.view === 'dashboard') Dashboard.start();
  if (App.view === 'replay' && !$('rp-games').children.length) Replay.list();
  if (App.view === 'analyse' && Analyse.pos && !Analyse.result) Analyse.analyse();
}

// A search's report as the engine's info line writes it (eval/PROTOCOL.md).
function infoText(info) {
  const parts = [];
  if (info.depth !== null) parts.push(`depth ${info.depth}`);
  if (info.seldepth !== null) parts.push(`seldepth ${info.seldepth}`);
  parts.push(`nodes ${info.nodes}`, `nps ${info.nps}`, `time ${info.time}`);
  const s = info.score;
  if (s) {
    if ('cp' in s) parts.push(`score cp ${s.cp}`);
    else if ('value' in s) parts.push(`score value ${s.value.toFixed(3)}`);
    else if ('mate' in s) parts.push(`score mate ${s.mate}`);
    else if ('proven' in s) parts.push(`score ${s.proven}`);
  }
  parts.push('pv', ...info.pv);
  return parts.join(' ');
}

async function start() {
  try {
    const v = await api('/api/variants');
    App.variantList = v.variants;
    for (const x of v.variants) App.variants[x.name] = x;
    const r = await api('/api/runs');
    App.runs = r.runs;
    App.players = (await api('/api/players')).kinds;
    App.defaultVariant = App.runs.length ? App.runs[0].variant : 'standard';
    if (!App.variants[App.defaultVariant]) App.defaultVariant = 'standard';
  } catch (e) { status('cannot reach the server: ' + e.message, true); return; }
  Replay.fillRuns();
  fillVariants($('play-variant'), App.defaultVariant);
  Play.fillOpponents();
  Play.init();
  Analyse.init();
  Replay.init();
  Dashboard.init();
  window.addEventListener('hashchange', showView);
  showView();
  document.body.dataset.ready = '1';
}

document.addEventListener('DOMContentLoaded', start);
