/** A skill as find_skills returns it. */
export interface Skill {
  skill_id: string;
  name: string;
  description: string;
}

/** Where skills were looked for: every skill of the network, an object type's, or some instances'. */
export type SkillScope = "network" | "object_type" | "instance";
