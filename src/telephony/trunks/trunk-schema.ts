/**
 * The trunk file (`trunks.yaml` beside the dialplans): the SIP trunks of carriers and PBXs the
 * gateway registers with, takes calls from and places calls through. The JSON Schema here is
 * what the loader checks the file against; trunk-loader.ts checks the rest (addresses,
 * secrets, names used twice).
 */
import { Type, type Static } from '@sinclair/typebox';

/** Defaults of the optional fields. */
export const TRUNK_DEFAULTS = {
  transport: 'udp',
  expiresSeconds: 600,
  codecs: ['PCMA', 'PCMU'],
  maxCalls: 30,
  optionsIntervalSeconds: 30,
} as const;

const HostPort = Type.String({
  minLength: 1,
  maxLength: 253,
  pattern: '^(\\[[0-9A-Fa-f:.]+\\]|[A-Za-z0-9.-]+)(:[0-9]{1,5})?$',
  description: 'host or address, optionally with :port (IPv6 in brackets)',
});

export const TrunkSchema = Type.Object(
  {
    name: Type.String({ pattern: '^[a-z0-9][a-z0-9_-]{0,39}$', description: 'the trunk name (lower-case letters, digits, - and _)' }),
    registrar: Type.Optional(
      Type.String({
        ...HostPort,
        description: "the provider's domain and registrar, host[:port]; without it the gateway does not register (a trunk that knows the gateway by address)",
      }),
    ),
    proxy: Type.Optional(
      Type.String({ ...HostPort, description: 'outbound proxy, host[:port]: every request to the trunk goes there (default: the registrar)' }),
    ),
    transport: Type.Optional(Type.Union([Type.Literal('udp'), Type.Literal('tcp'), Type.Literal('tls')], { description: 'default udp' })),
    tls_ca_file: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 4096,
        description: "with transport tls: PEM file of the CAs the trunk's certificate must chain to, in place of the public roots (relative to the trunk file)",
      }),
    ),
    username: Type.Optional(Type.String({ minLength: 1, maxLength: 128, pattern: '^[^\\s<>"@]+$', description: 'the account at the provider (AOR user)' })),
    auth_username: Type.Optional(Type.String({ minLength: 1, maxLength: 128, description: 'the digest user name, when it differs from username' })),
    password_env: Type.Optional(Type.String({ pattern: '^[A-Za-z_][A-Za-z0-9_]*$', description: 'the environment variable holding the password' })),
    realm: Type.Optional(Type.String({ minLength: 1, maxLength: 253, description: 'answer only challenges of this realm (default: any realm of the trunk)' })),
    from_user: Type.Optional(Type.String({ minLength: 1, maxLength: 128, pattern: '^[^\\s<>"@]+$', description: 'user part of From (default username)' })),
    from_domain: Type.Optional(
      Type.String({ minLength: 1, maxLength: 253, pattern: '^[A-Za-z0-9.:\\[\\]-]+$', description: "domain of From (default: the registrar's host)" }),
    ),
    caller_id: Type.Optional(Type.String({ pattern: '^\\+?[0-9]{3,20}$', description: 'the number outbound calls show (E.164)' })),
    codecs: Type.Optional(
      Type.Array(Type.Union([Type.Literal('PCMA'), Type.Literal('PCMU'), Type.Literal('opus')]), {
        minItems: 1,
        uniqueItems: true,
        description: 'offered in this order',
      }),
    ),
    allow: Type.Optional(Type.Array(Type.String({ minLength: 1 }), { description: 'addresses (CIDR) the trunk calls from; allowed for this trunk only' })),
    max_calls: Type.Optional(Type.Integer({ minimum: 1, maximum: 10_000, description: 'calls at once through this trunk, both ways' })),
    register: Type.Optional(Type.Boolean({ description: 'whether to register (default: when a registrar is given)' })),
    expires_s: Type.Optional(Type.Integer({ minimum: 60, maximum: 86_400, description: 'registration lifetime asked for' })),
    options_interval_s: Type.Optional(Type.Integer({ minimum: 0, maximum: 3600, description: 'OPTIONS keep-alive interval; 0 turns it off' })),
  },
  { additionalProperties: false },
);
export type TrunkEntry = Static<typeof TrunkSchema>;

export const TrunkFileSchema = Type.Object(
  {
    trunks: Type.Array(Type.Unknown(), { description: 'the trunks' }),
  },
  { additionalProperties: false },
);
