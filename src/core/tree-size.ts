/** What a tree holds, counted up to a limit. */
export interface TreeSize {
  /** Nodes without children. */
  leaves: number;
  /** Nodes with children (an empty list of children counts: the node is a group). */
  groups: number;
  /** Levels below the root (a lone leaf is depth 1). */
  depth: number;
  /** The first limit passed, when one was: counting stopped there. */
  over?: "leaves" | "groups" | "depth";
}

/**
 * Counts the leaves, groups and depth of a tree (a condition, a JSON value)
 * with an explicit stack, never recursion, so that a tree nested a hundred
 * thousand deep is measured without overflowing the call stack; it stops at
 * the first limit passed, so that a huge tree is refused in time
 * proportional to the limits, not to its size. `children` gives a node's
 * children, or undefined for a leaf.
 */
export function measureTree<T>(
  root: T,
  children: (node: T) => readonly T[] | undefined,
  limits: { leaves: number; groups: number; depth: number },
): TreeSize {
  const size: TreeSize = { leaves: 0, groups: 0, depth: 0 };
  const stack: { node: T; depth: number }[] = [{ node: root, depth: 1 }];
  while (stack.length > 0) {
    const { node, depth } = stack.pop()!;
    if (depth > size.depth) size.depth = depth;
    if (size.depth > limits.depth) return { ...size, over: "depth" };
    const kids = children(node);
    if (kids === undefined) {
      if (++size.leaves > limits.leaves) return { ...size, over: "leaves" };
      continue;
    }
    if (++size.groups > limits.groups) return { ...size, over: "groups" };
    for (const kid of kids) stack.push({ node: kid, depth: depth + 1 });
  }
  return size;
}
