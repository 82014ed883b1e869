import { h } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import htm from 'htm';
import uPlot from 'uplot';
import { shown } from './text.js';

export const html = htm.bind(h);

/**
 * Runs `load` on mount and whenever `deps` change; returns [data, error, reload]. Data and errors
 * belong to the deps they were loaded for: after a change the old answer is no longer returned (a
 * page never shows one item's data under another's id) and a late answer for old deps is dropped.
 * A reload keeps showing the current data until the new answer arrives.
 */
export function useLoad(load, deps = []) {
  const key = JSON.stringify(deps);
  const [state, setState] = useState({ key: null, data: null, error: null });
  const [tick, setTick] = useState(0);
  useEffect(() => {
    let live = true;
    load().then(
      (data) => live && setState({ key, data, error: null }),
      (error) => live && setState({ key, data: null, error }),
    );
    return () => {
      live = false;
    };
  }, [key, tick]);
  const current = state.key === key;
  return [current ? state.data : null, current ? state.error : null, () => setTick((t) => t + 1)];
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

/**
 * An operator's action and its error line: `act(work)` clears the error, runs `work`, and keeps what
 * it threw for <ErrorLine>.
 */
export function useAction() {
  const [error, setError] = useState(null);
  const act = async (work) => {
    setError(null);
    try {
      await work();
    } catch (err) {
      setError(err);
    }
  };
  return { error, setError, act };
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

/** Text a client may have chosen (a model name): one line cut with an ellipsis, the whole of it in the tooltip. */
export function Clip({ text }) {
  const t = shown(text);
  return html`<span class="clip" title=${t}>${t}</span>`;
}

/**
 * A value shown once, with "Copy". The clipboard API exists only in a secure context (https or
 * localhost); elsewhere the value is selected and copied with execCommand, and when even that is
 * refused the operator is told to press Ctrl+C on the selection.
 */
export function CopyValue({ text, id }) {
  const ref = useRef(null);
  const [outcome, setOutcome] = useState(null);
  const select = () => {
    const range = document.createRange();
    range.selectNodeContents(ref.current);
    const selection = document.getSelection();
    selection.removeAllRanges();
    selection.addRange(range);
  };
  const copy = async () => {
    if (globalThis.isSecureContext && navigator.clipboard) {
      try {
        await navigator.clipboard.writeText(text);
        setOutcome('copied');
        return;
      } catch {
        // refused (no permission): fall back to the selection
      }
    }
    select();
    let copied = false;
    try {
      copied = document.execCommand('copy');
    } catch {
      copied = false;
    }
    setOutcome(copied ? 'copied' : 'select');
  };
  return html`<code id=${id} ref=${ref}>${text}</code> <button type="button" class="copy" onClick=${copy}>${outcome === 'copied' ? 'Copied' : 'Copy'}</button>
    ${outcome === 'select' && html`<span class="copy-hint" role="status">Selected: press Ctrl+C (⌘C on a Mac) to copy.</span>`}`;
}
