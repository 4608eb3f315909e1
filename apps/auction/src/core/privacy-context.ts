import type { DspRecord, PublisherRecord } from '@app/catalog';
import { TcfConsent, mayIdentifyUser, mergePrivacy, type PrivacySignals } from '@app/openrtb';

/**
 * The privacy of one request (docs/dsp-integration.md#privacy): the tag's signals over the
 * publisher's catalog defaults (and its COPPA flag), and the TCF string decoded once, where GDPR
 * applies: a string that does not decode consents to nothing.
 */
export function privacyOf(
  tag: Omit<PrivacySignals, 'coppa'>,
  publisher: Pick<PublisherRecord, 'privacy' | 'coppa'> | undefined,
): { privacy: PrivacySignals; consent?: TcfConsent } {
  const privacy = mergePrivacy(tag, publisher && { ...publisher.privacy, coppa: publisher.coppa });
  return {
    privacy,
    consent: privacy.gdpr === 1 ? TcfConsent.decode(privacy.gdprConsent) : undefined,
  };
}

/** Whether a DSP may get the user's ids, full IP address and a sync under these signals. */
export function mayIdentifyFor(
  request: { readonly privacy: PrivacySignals; readonly consent?: TcfConsent },
  dsp: Pick<DspRecord, 'gvlVendorId'>,
): boolean {
  return mayIdentifyUser(request.privacy, request.consent, dsp.gvlVendorId);
}
