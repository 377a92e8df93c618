/**
 * Migrations are listed statically (not read from a folder) so the bundled executable carries
 * them. Add each new file here, in order.
 */
import type { Knex } from 'knex';
import * as initial from '../../migrations/20261122000000_initial';
import * as tokensAndCounters from '../../migrations/20261122000100_tokens_and_counters';
import * as totpRecoveryCodes from '../../migrations/20261122000200_totp_recovery_codes';
import * as audit from '../../migrations/20261122000300_audit';
import * as signingKeys from '../../migrations/20261123000000_signing_keys';
import * as sessions from '../../migrations/20261123000100_sessions';
import * as oidc from '../../migrations/20261123000200_oidc';
import * as filterTrigrams from '../../migrations/20261124000000_filter_trigrams';
import * as groupGates from '../../migrations/20261125000000_group_gates';
import * as keyTokenTtl from '../../migrations/20261125000100_key_token_ttl';
import * as knownSignins from '../../migrations/20261125000200_known_signins';
import * as forwardAuth from '../../migrations/20261126000000_forward_auth';
import * as passkeys from '../../migrations/20261127000000_passkeys';
import * as invitations from '../../migrations/20261128000000_invitations';
import * as upstreamProviders from '../../migrations/20261129000000_upstream_providers';
import * as deliveries from '../../migrations/20261130000000_deliveries';
import * as usernames from '../../migrations/20261201000000_usernames';
import * as appPasswords from '../../migrations/20261201000100_app_passwords';
import * as groupIndexes from '../../migrations/20261202000000_group_indexes';
import * as apiKeys from '../../migrations/20261203000000_api_keys';
import * as deviceUserCodes from '../../migrations/20261204000000_device_user_codes';
import * as saml from '../../migrations/20261205000000_saml';
import * as scim from '../../migrations/20261206000000_scim';
import * as scimWrites from '../../migrations/20261207000000_scim_writes';
import * as samlLogout from '../../migrations/20261208000000_saml_logout';
import * as signinStrength from '../../migrations/20261209000000_signin_strength';
import * as nestedGroups from '../../migrations/20261210000000_nested_groups';
import * as configManaged from '../../migrations/20261211000000_config_managed';
import * as accountOrigin from '../../migrations/20261212000000_account_origin';
import * as directorySources from '../../migrations/20261212000100_directory_sources';
import * as emailSkeletons from '../../migrations/20261213000000_email_skeletons';
import * as emailSkeletonsIdna from '../../migrations/20261214000000_email_skeletons_idna';
import * as configRefs from '../../migrations/20261214000100_config_refs';
import * as posixAndSshKeys from '../../migrations/20261215000000_posix_and_ssh_keys';
import * as signinByMail from '../../migrations/20261216000000_signin_by_mail';
import * as oauth2Providers from '../../migrations/20261216000100_oauth2_providers';
import * as ownPages from '../../migrations/20261217000000_own_pages';
import * as accountLanguage from '../../migrations/20261218000000_account_language';

interface Migration {
  up(knex: Knex): Promise<void>;
  down(knex: Knex): Promise<void>;
}

export const MIGRATIONS: ReadonlyArray<[string, Migration]> = [
  ['20261122000000_initial', initial],
  ['20261122000100_tokens_and_counters', tokensAndCounters],
  ['20261122000200_totp_recovery_codes', totpRecoveryCodes],
  ['20261122000300_audit', audit],
  ['20261123000000_signing_keys', signingKeys],
  ['20261123000100_sessions', sessions],
  ['20261123000200_oidc', oidc],
  ['20261124000000_filter_trigrams', filterTrigrams],
  ['20261125000000_group_gates', groupGates],
  ['20261125000100_key_token_ttl', keyTokenTtl],
  ['20261125000200_known_signins', knownSignins],
  ['20261126000000_forward_auth', forwardAuth],
  ['20261127000000_passkeys', passkeys],
  ['20261128000000_invitations', invitations],
  ['20261129000000_upstream_providers', upstreamProviders],
  ['20261130000000_deliveries', deliveries],
  ['20261201000000_usernames', usernames],
  ['20261201000100_app_passwords', appPasswords],
  ['20261202000000_group_indexes', groupIndexes],
  ['20261203000000_api_keys', apiKeys],
  ['20261204000000_device_user_codes', deviceUserCodes],
  ['20261205000000_saml', saml],
  ['20261206000000_scim', scim],
  ['20261207000000_scim_writes', scimWrites],
  ['20261208000000_saml_logout', samlLogout],
  ['20261209000000_signin_strength', signinStrength],
  ['20261210000000_nested_groups', nestedGroups],
  ['20261211000000_config_managed', configManaged],
  ['20261212000000_account_origin', accountOrigin],
  ['20261212000100_directory_sources', directorySources],
  ['20261213000000_email_skeletons', emailSkeletons],
  ['20261214000000_email_skeletons_idna', emailSkeletonsIdna],
  ['20261214000100_config_refs', configRefs],
  ['20261215000000_posix_and_ssh_keys', posixAndSshKeys],
  ['20261216000000_signin_by_mail', signinByMail],
  ['20261216000100_oauth2_providers', oauth2Providers],
  ['20261217000000_own_pages', ownPages],
  ['20261218000000_account_language', accountLanguage],
];

export const migrationSource: Knex.MigrationSource<[string, Migration]> = {
  getMigrations: async () => [...MIGRATIONS],
  getMigrationName: ([name]) => name,
  getMigration: async ([, migration]) => migration,
};

export const LATEST_MIGRATION = MIGRATIONS[MIGRATIONS.length - 1][0];
