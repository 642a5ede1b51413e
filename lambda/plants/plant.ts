/** A plant as the caller creates it: `id` is exact over the whole int64 range. */
export interface NewPlant {
  id: bigint;
  name: string;
  tag?: string;
}

/** A plant as the API returns it: the spec's Plant has no id. */
export interface Plant {
  name: string;
  tag?: string;
}

export function toPlant({ name, tag }: NewPlant): Plant {
  return tag === undefined ? { name } : { name, tag };
}
