import { h } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import htm from 'htm';
import uPlot from 'uplot';

export const html = htm.bind(h);

/** Runs `load` on mount and whenever `deps` change; returns [data, error, reload]. */
export function useLoad(load, deps = []) {
  const [state, setState] = useState({ data: null, error: null });
  const [tick, setTick] = useState(0);
  useEffect(() => {
    let live = true;
    load().then(
      (data) => live && setState({ data, error: null }),
      (error) => live && setState({ data: null, error }),
    );
    return () => {
      live = false;
    };
  }, [...deps, tick]);
  return [state.data, state.error, () => setTick((t) => t + 1)];
}

/** Cursor pages: the cursor of the page shown, a reset (new filter), and the Previous/Next buttons. */
export function usePages() {
  const [cursors, setCursors] = useState([null]);
  const Pager = ({ next }) => html`<p class="pager">
    ${cursors.length > 1 && html`<button type="button" onClick=${() => setCursors(cursors.slice(0, -1))}>Previous</button>`}
    ${next && html`<button type="button" onClick=${() => setCursors([...cursors, next])}>Next</button>`}
  </p>`;
  return { cursor: cursors[cursors.length - 1], reset: () => setCursors([null]), Pager };
}

export function ErrorLine({ error }) {
  return error ? html`<p class="error" role="alert">${error.message}</p>` : null;
}

export const fmtTime = (iso) => (iso ? new Date(iso).toLocaleString() : '—');

/** A time-series chart (uPlot); `t` in Unix ms, each series { label, values, color }. */
export function Chart({ title, t, series, id }) {
  const ref = useRef(null);
  useEffect(() => {
    const el = ref.current;
    if (!el) return undefined;
    const width = Math.max(300, el.clientWidth || 600);
    const plot = new uPlot(
      {
        title,
        width,
        height: 180,
        series: [{}, ...series.map((s) => ({ label: s.label, stroke: s.color, width: 1.5, spanGaps: true, points: { show: true, size: 4 } }))],
        axes: [{}, { size: 60, values: (_u, ticks) => ticks.map((v) => (Math.abs(v) < 1 && v !== 0 ? v.toPrecision(2) : String(v))) }],
        legend: { live: false },
      },
      [t.map((x) => x / 1000), ...series.map((s) => s.values)],
      el,
    );
    return () => plot.destroy();
  }, [title, t, series]);
  const total = series.reduce((sum, s) => sum + s.values.reduce((a, b) => a + (b ?? 0), 0), 0);
  return html`<div class="chart" id=${id} data-total=${total} ref=${ref}></div>`;
}

const COLORS = ['#2563eb', '#dc2626', '#16a34a', '#9333ea', '#ea580c', '#0891b2', '#be123c'];
export const color = (i) => COLORS[i % COLORS.length];

/** "Copy" next to a value shown once. */
export function CopyButton({ text }) {
  const [done, setDone] = useState(false);
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(text);
      setDone(true);
    } catch {
      setDone(false);
    }
  };
  return html`<button type="button" class="copy" onClick=${copy}>${done ? 'Copied' : 'Copy'}</button>`;
}
