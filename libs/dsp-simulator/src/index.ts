export {
  DSP_FAULTS,
  isDspFault,
  isNativeFault,
  isSyncFault,
  NATIVE_FAULTS,
  NATIVE_MODES,
  SYNC_FAULTS,
  type DspBehaviour,
  type DspFault,
  type DspSimulatorOptions,
  type NativeFault,
  type NativeMode,
  type SyncFault,
  type UniformRange,
} from './dsp-simulator.settings';
export {
  BID_PATH,
  DspSimulator,
  MAX_BID_REQUEST_BYTES,
  RECORDED_LIMIT,
  type DspSimulatorStats,
  type ReceivedBidRequest,
  type ReceivedSync,
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
export { DEFAULT_MAIN_IMAGE, type NativeKind } from './native-response.builder';
export { HANG_PATH, HUGE_NATIVE_IMAGE, JAVASCRIPT_LINK, TITLE_OVERRUN } from './native.faults';
export { HUGE_IMAGE_BYTES, IMAGE_CACHE_LIMIT } from './png.renderer';
export {
  DSP_UID_COOKIE,
  DSP_UID_MAX_AGE_SECONDS,
  FOREIGN_SYNC_URL,
  HUGE_UUID_LENGTH,
  SCRIPT_UUID,
  SYNC_PATH,
} from './user-sync';
export { parseSimulatorArgs, SIMULATOR_USAGE } from './simulator-args.parser';
