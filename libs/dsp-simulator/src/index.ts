export {
  DSP_FAULTS,
  isDspFault,
  type DspBehaviour,
  type DspFault,
  type DspSimulatorOptions,
  type UniformRange,
} from './dsp-simulator.settings';
export {
  BID_PATH,
  DspSimulator,
  MAX_BID_REQUEST_BYTES,
  RECORDED_LIMIT,
  type DspSimulatorStats,
  type ReceivedBidRequest,
  type ReceivedWin,
  type TrackerHit,
} from './dsp-simulator';
export {
  ABSURD_PRICE_CPM,
  BLOCKED_ADOMAIN_FALLBACK,
  DRIP_INTERVAL_MS,
  LATE_ANSWER_MS,
  REDIRECT_PATH,
} from './fault.responder';
export { LANDING_PAGE_TITLE, MAX_CREATIVE_SIDE } from './creative.renderer';
export { parseSimulatorArgs, SIMULATOR_USAGE } from './simulator-args.parser';
