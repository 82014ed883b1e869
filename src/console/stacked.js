import { html, color } from './ui.js';
import { shown } from './text.js';

// A stacked bar chart drawn as SVG by hand: one bar per time bucket, one coloured part per series.
// Colours and sizes are SVG attributes (the console's CSP allows no inline style).

const W = 800;
const H = 260;
const PAD = { left: 64, right: 8, top: 10, bottom: 34 };

/** A round step for about four grid lines up to `max`. */
function step(max) {
  const raw = max / 4;
  const mag = 10 ** Math.floor(Math.log10(raw));
  return [1, 2, 2.5, 5, 10].map((m) => m * mag).find((s) => s >= raw);
}

const money = (v) => (v === 0 ? '$0' : v < 0.01 ? `$${v.toPrecision(2)}` : `$${v.toFixed(2)}`);

/**
 * `t`: bucket starts (Unix ms); `series`: [{ name, values }] in stacking order (first at the
 * bottom); `label(t)`: an x-axis label; `format(v)`: a y value as text.
 */
export function StackedBars({ id, t, series, label, format = money }) {
  const totals = t.map((_, i) => series.reduce((sum, s) => sum + (s.values[i] ?? 0), 0));
  const max = Math.max(0, ...totals);
  const top = max > 0 ? Math.ceil(max / step(max)) * step(max) : 1;
  const grid = max > 0 ? Array.from({ length: Math.round(top / step(max)) + 1 }, (_, k) => k * step(max)) : [0];
  const plotW = W - PAD.left - PAD.right;
  const plotH = H - PAD.top - PAD.bottom;
  const slot = plotW / Math.max(1, t.length);
  const barW = Math.max(1, slot * 0.8);
  const y = (v) => PAD.top + plotH - (v / top) * plotH;
  const every = Math.max(1, Math.ceil(t.length / 8));
  const total = totals.reduce((a, b) => a + b, 0);
  return html`<figure class="stacked" id=${id} data-total=${total.toFixed(6)}>
    <svg viewBox=${`0 0 ${W} ${H}`} role="img" aria-label=${`Total ${format(total)}`}>
      ${grid.map(
        (g) => html`<g class="grid"><line x1=${PAD.left} x2=${W - PAD.right} y1=${y(g)} y2=${y(g)} stroke="#e5e7eb" />
          <text x=${PAD.left - 6} y=${y(g) + 4} text-anchor="end" font-size="12" fill="#6b7280">${format(g)}</text></g>`,
      )}
      ${t.map((ts, i) => {
        let base = 0;
        return html`<g class="bar" data-t=${ts}>
          ${series.map((s, k) => {
            const v = s.values[i] ?? 0;
            if (!v) return null;
            const part = html`<rect x=${PAD.left + i * slot + (slot - barW) / 2} y=${y(base + v)} width=${barW} height=${Math.max(0.5, y(base) - y(base + v))} fill=${color(k)}>
              <title>${`${shown(s.name)} · ${label(ts)} · ${format(v)}`}</title>
            </rect>`;
            base += v;
            return part;
          })}
          ${i % every === 0 && html`<text x=${PAD.left + i * slot + slot / 2} y=${H - PAD.bottom + 16} text-anchor="middle" font-size="12" fill="#374151">${label(ts)}</text>`}
        </g>`;
      })}
      <line x1=${PAD.left} x2=${W - PAD.right} y1=${y(0)} y2=${y(0)} stroke="#9ca3af" />
    </svg>
    ${!total && html`<figcaption class="hint">Nothing in this range.</figcaption>`}
  </figure>`;
}
