// A small line chart drawn as inline SVG: time on x, one line per series, hover read-out.

import { h } from './dom.js';
import { clock, rate, shortClock } from './format.js';

const SVG = 'http://www.w3.org/2000/svg';
const HEIGHT = 220;
const MARGIN = { top: 12, right: 14, bottom: 26, left: 48 };
const TICK_MINUTES = [1, 2, 5, 10, 15, 30, 60, 120, 180, 360, 720, 1440];

function svg(tag, attrs, ...children) {
  const el = document.createElementNS(SVG, tag);
  for (const [name, value] of Object.entries(attrs || {})) {
    el.setAttribute(name, String(value));
  }
  el.append(...children);
  return el;
}

/** A step of 1, 2, 2.5 or 5 times a power of ten, so that 4 steps cover `max`. */
function niceStep(max) {
  const raw = Math.max(max, 1e-9) / 4;
  const power = 10 ** Math.floor(Math.log10(raw));
  const step = [1, 2, 2.5, 5, 10].find((f) => f * power >= raw) * power;
  return max <= 0 ? 0.25 : step;
}

/** Tick times at a round interval, at most one per 80 px. */
function timeTicks(t0, t1, innerW) {
  const spanMinutes = (t1 - t0) / 60000;
  const maxTicks = Math.max(2, Math.min(6, Math.floor(innerW / 80)));
  const minutes = TICK_MINUTES.find((m) => spanMinutes / m <= maxTicks) || 1440;
  const step = minutes * 60000;
  const ticks = [];
  for (let t = Math.ceil(t0 / step) * step; t <= t1; t += step) {
    ticks.push(t);
  }
  return ticks;
}

function linePath(points, x, y, key) {
  return points.map((p, i) => `${i ? 'L' : 'M'}${x(p.t).toFixed(1)},${y(p.values[key]).toFixed(1)}`).join('');
}

function scales(points, series, width) {
  const t0 = points[0].t;
  const t1 = points[points.length - 1].t;
  const innerW = width - MARGIN.left - MARGIN.right;
  const innerH = HEIGHT - MARGIN.top - MARGIN.bottom;
  const max = Math.max(0, ...points.flatMap((p) => series.map((s) => p.values[s.key] || 0)));
  const step = niceStep(max);
  const yMax = step * 4;
  return {
    t0, t1, step, yMax, innerW,
    x: (t) => MARGIN.left + (t1 === t0 ? innerW / 2 : ((t - t0) / (t1 - t0)) * innerW),
    y: (v) => MARGIN.top + innerH - ((v || 0) / yMax) * innerH,
  };
}

function axes(sc, width) {
  const group = svg('g', { class: 'axes' });
  for (let v = 0; v <= sc.yMax + 1e-9; v += sc.step) {
    const y = sc.y(v);
    group.append(
      svg('line', { x1: MARGIN.left, x2: width - MARGIN.right, y1: y, y2: y, class: 'grid' }),
      svg('text', { x: MARGIN.left - 8, y: y + 4, 'text-anchor': 'end' }, rate(v)),
    );
  }
  for (const t of timeTicks(sc.t0, sc.t1, sc.innerW)) {
    group.append(svg('text', { x: sc.x(t), y: HEIGHT - 6, 'text-anchor': 'middle' },
      shortClock(new Date(t))));
  }
  return group;
}

function nearestIndex(points, sc, px) {
  let best = 0;
  points.forEach((p, i) => {
    if (Math.abs(sc.x(p.t) - px) < Math.abs(sc.x(points[best].t) - px)) {
      best = i;
    }
  });
  return best;
}

/**
 * series: [{key, name, cls}]. update({points: [{t: ms, values: {key: number}}]}) redraws only
 * when the points or the width changed.
 */
export function createChart({ label, unit, series }) {
  const values = new Map();
  const legend = h('ul', { class: 'legend' }, series.map((s) => {
    const value = h('strong', { 'data-series': s.key }, '—');
    values.set(s.key, value);
    const swatch = h('span', { class: 'swatch', 'aria-hidden': 'true' });
    return h('li', { class: `series-${s.cls}` }, swatch, `${s.name} `, value);
  }));
  const plot = h('div', { class: 'chart-plot' });
  const tooltip = h('div', { class: 'chart-tooltip', hidden: true, 'aria-hidden': 'true' });
  const empty = h('p', { class: 'chart-empty', hidden: true }, 'No traffic recorded in this time range yet.');
  const el = h('figure', { class: 'chart', 'data-testid': 'throughput-chart' },
    legend, h('div', { class: 'chart-area' }, plot, tooltip, empty));
  let points = [];
  let drawnSig = '';
  let hoverX = null;

  function showTooltip(sc, px) {
    hoverX = px;
    const i = nearestIndex(points, sc, px);
    const p = points[i];
    const guide = plot.querySelector('.guide');
    guide.setAttribute('x1', sc.x(p.t));
    guide.setAttribute('x2', sc.x(p.t));
    guide.style.display = '';
    tooltip.replaceChildren(h('div', { class: 'tooltip-time' }, clock(new Date(p.t))),
      ...series.map((s) => h('div', { class: `series-${s.cls}` }, h('span', { class: 'swatch' }),
        `${s.name}: ${rate(p.values[s.key])}${unit}`)));
    tooltip.hidden = false;
    const left = Math.min(sc.x(p.t) + 12, plot.clientWidth - tooltip.offsetWidth - 4);
    tooltip.style.left = `${Math.max(4, left)}px`;
  }

  function hideTooltip() {
    hoverX = null;
    tooltip.hidden = true;
    const guide = plot.querySelector('.guide');
    if (guide) {
      guide.style.display = 'none';
    }
  }

  function draw() {
    const width = plot.clientWidth;
    const sig = JSON.stringify([width, points]);
    if (!width || sig === drawnSig) {
      return;
    }
    drawnSig = sig;
    const hasTraffic = points.some((p) => series.some((s) => p.values[s.key] > 0));
    empty.hidden = hasTraffic;
    if (!hasTraffic) {
      plot.replaceChildren();
      hideTooltip();
      return;
    }
    const sc = scales(points, series, width);
    const overlay = svg('rect', { x: MARGIN.left, y: 0, width: sc.innerW, height: HEIGHT, class: 'overlay' });
    overlay.addEventListener('pointermove', (e) => showTooltip(sc, e.offsetX));
    overlay.addEventListener('pointerleave', hideTooltip);
    const guide = svg('line', { class: 'guide', y1: MARGIN.top, y2: HEIGHT - MARGIN.bottom });
    guide.style.display = 'none';
    const chart = svg('svg', {
      width, height: HEIGHT, viewBox: `0 0 ${width} ${HEIGHT}`, role: 'img', 'aria-label': label,
    },
    axes(sc, width),
    ...series.map((s) => svg('path', { d: linePath(points, sc.x, sc.y, s.key), class: `line series-${s.cls}` })),
    guide,
    overlay);
    plot.replaceChildren(chart);
    if (hoverX === null) {
      tooltip.hidden = true;
    } else {
      showTooltip(sc, hoverX);
    }
  }

  function update(next) {
    points = next;
    const last = points[points.length - 1];
    for (const s of series) {
      values.get(s.key).textContent = last ? `${rate(last.values[s.key])}${unit}` : '—';
    }
    draw();
  }

  new ResizeObserver(draw).observe(plot);
  return { el, update };
}
