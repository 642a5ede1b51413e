import { type DeployRule, finding, knownParts, resourcesOfType } from "./deploy-rule.ts";

/** Cognito refuses a prefix containing any of these, anywhere in it. */
export const COGNITO_RESERVED_WORDS = ["aws", "amazon", "cognito"] as const;
export const COGNITO_DOMAIN_PREFIX_MAX_LENGTH = 63;
/**
 * The length of a part synth cannot know: the only one the stack puts into a prefix is the first block
 * of the stack's UUID, 8 hex digits (infra/cognito-token-issuer.ts).
 */
const UNRESOLVED_PART_LENGTH = 8;

const RESERVED = new RegExp(COGNITO_RESERVED_WORDS.join("|"), "g");

/** What Cognito would refuse in `prefix`, in words for an error message; `undefined` when it is accepted. */
export function domainPrefixProblem(prefix: string): string | undefined {
  if (prefix.length === 0 || prefix.length > COGNITO_DOMAIN_PREFIX_MAX_LENGTH) {
    return `must be 1 to ${COGNITO_DOMAIN_PREFIX_MAX_LENGTH} characters, got ${prefix.length}`;
  }
  if (!/^[a-z0-9](?:[a-z0-9-]*[a-z0-9])?$/.test(prefix)) {
    return "must be lowercase letters, digits and hyphens, not starting or ending with a hyphen";
  }
  const reserved = COGNITO_RESERVED_WORDS.find((word) => prefix.includes(word));
  return reserved === undefined ? undefined : `must not contain the reserved word "${reserved}"`;
}

/**
 * `text` without any reserved word, removed until none is left: removing one can join the letters
 * around it into another (`amazawson` → `amazon` → ``), so a single pass is not enough.
 */
export function withoutReservedWords(text: string): string {
  let current = text;
  for (;;) {
    const next = current.replace(RESERVED, "");
    if (next === current) return current;
    current = next;
  }
}

export const cognitoDomainPrefix: DeployRule = {
  id: "PlantStore-CognitoDomainPrefix",
  behaviour:
    'Cognito refuses a domain prefix that contains "aws", "amazon" or "cognito", is longer than 63 ' +
    "characters, or holds anything but lowercase letters, digits and inner hyphens; CloudFormation finds " +
    "out only when it creates the domain, after the rest of the stack.",
  documentation:
    "Amazon Cognito Developer Guide, 'Using the Amazon Cognito prefix domain' (reserved words); Amazon " +
    "Cognito API Reference, CreateUserPoolDomain (Domain: length and pattern)",
  fix: "choose another -c cognitoDomainPrefix=…, or a stack name the derived prefix can be made from",
  check({ template }) {
    return resourcesOfType(template, "AWS::Cognito::UserPoolDomain").flatMap(([id, domain]) => {
      if (domain.Properties?.CustomDomainConfig !== undefined) return [];
      const known = knownParts(domain.Properties?.Domain);
      if (known === undefined)
        return finding(id, "the domain prefix is not a string or a join synth can read");
      // Unresolved parts stand for lowercase hex digits, which hold no reserved word and no bad character.
      const sample = known.parts
        .map((part) => part ?? "0".repeat(UNRESOLVED_PART_LENGTH))
        .join(known.delimiter);
      const problem = domainPrefixProblem(sample);
      const shown = known.parts.map((part) => part ?? "<deploy-time>").join(known.delimiter);
      return finding(id, problem && `the domain prefix "${shown}" ${problem}`);
    });
  },
};
