/**
 * Reporting part 2.5 (docs/specification-notes.md#reporting-part-2-5): the values the `age` dimension takes.
 */
export const AGE_RANGES = ['18-20', '21-24', '25-34', '35-44', '45-54', '55-64', '65+'] as const;
export type AgeRange = (typeof AGE_RANGES)[number];

/**
 * Reporting part 2.5 (docs/specification-notes.md#reporting-part-2-5): the values the `gender` dimension
 * takes.
 */
export const GENDERS = ['male', 'female'] as const;
export type Gender = (typeof GENDERS)[number];
