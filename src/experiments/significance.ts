// Which variant converts best, and how sure that is, in a form that stays valid however often the
// owner looks: an always-valid p-value from a mixture sequential probability ratio test (mSPRT,
// Johari, Pekelis and Walsh, "Always Valid Inference", 2017) on the difference of two conversion
// rates, the best variant against each other one, Bonferroni-corrected over those comparisons
// (docs/decisions.md, "Experiments").

/** The level at which a winner is called: 95% confidence. */
export const ALPHA = 0.05
/** No winner before every variant has had this many visits, whatever the p-value says. */
export const MIN_VISITS_PER_VARIANT = 100
/**
 * The mixture's variance over the true difference of rates (tau = 0.05: differences of a few
 * percentage points are the ones expected). A smaller tau reacts faster to small differences and
 * slower to large ones; the test is valid for any fixed tau.
 */
export const MIXTURE_VARIANCE = 0.05 ** 2

export interface Arm {
  visits: number
  conversions: number
}

export interface Verdict {
  /** the index of the variant with the best rate, when confident; else null */
  winner: number | null
  /** the always-valid p-value of "the best variant is no better than the others", 0 to 1; null with fewer than two variants */
  p_value: number | null
  confident: boolean
}

/**
 * The mSPRT p-value of "a and b convert alike", from the totals so far: 1 / Lambda, where Lambda
 * is the likelihood ratio of a normal mixture (variance tau^2) over the difference against none,
 * under the normal approximation with the pooled rate's variance V. Using today's totals, not the
 * running minimum of past values, only makes it larger: still valid under any peeking.
 */
export function pairPValue(a: Arm, b: Arm, tau2 = MIXTURE_VARIANCE): number {
  if (a.visits === 0 || b.visits === 0) return 1
  const pooled = (a.conversions + b.conversions) / (a.visits + b.visits)
  const v = pooled * (1 - pooled) * (1 / a.visits + 1 / b.visits)
  if (v === 0) return 1
  const diff = a.conversions / a.visits - b.conversions / b.visits
  const logLambda = 0.5 * Math.log(v / (v + tau2)) + (tau2 * diff * diff) / (2 * v * (v + tau2))
  return Math.min(1, Math.exp(-logLambda))
}

/** The experiment's verdict over its variants' totals (in variant order). */
export function judge(arms: readonly Arm[]): Verdict {
  if (arms.length < 2) return { winner: null, p_value: null, confident: false }
  let best = 0
  const rate = (a: Arm) => (a.visits === 0 ? 0 : a.conversions / a.visits)
  for (let i = 1; i < arms.length; i++) if (rate(arms[i]!) > rate(arms[best]!)) best = i
  let worst = 0
  for (let i = 0; i < arms.length; i++) if (i !== best) worst = Math.max(worst, pairPValue(arms[best]!, arms[i]!))
  const p = Math.min(1, worst * (arms.length - 1))
  const sampled = arms.every((a) => a.visits >= MIN_VISITS_PER_VARIANT)
  const confident = sampled && p <= ALPHA
  return { winner: confident ? best : null, p_value: round(p), confident }
}

const round = (p: number): number => Number(p.toPrecision(4))
