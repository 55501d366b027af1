/** The value of one sample line (`name{labels} value`) of a /metrics text, or 0 when the series is absent. */
export function metricSample(text: string, series: string): number {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line ? Number(line.slice(series.length + 1)) : 0;
}
