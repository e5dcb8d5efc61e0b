/* What ik.c and ik_many.c share: the two-bone solve's thresholds, so that the lane form of
 * ik_many.c makes every decision the scalar solve makes, on the same numbers. */
#ifndef CROWDBLEND_IK_IK_IMPL_H
#define CROWDBLEND_IK_IK_IMPL_H

/* Thresholds, all relative (scale-free):
 *  - CB_IK_DIR_EPS: a projection of a unit vector shorter than this has no usable direction (the
 *    pole along the target axis, an up axis along the aim); 1e-4 keeps the direction of what
 *    is left accurate to about 1e-3 rad in float.
 *  - CB_IK_STRAIGHT_EPS: a chain whose bend has a sine below this counts as straight (or folded),
 * so its plane is not taken from the pose; at 1e-3 (0.06 degree) the plane normal of a chain just
 * above it is still good to about 1e-4 rad.
 *  - CB_IK_NEAR_EPS: a target (or end) this close to the start joint, relative to the chain's
 *    length, has no direction.
 *  - CB_IK_HINGE_EPS: bone parts perpendicular to the hinge whose product p q is this small
 * relative to the squared chain length cannot change the reach in float: the reach interval, dmax^2
 * - dmin^2 = 4 p q, would be below the rounding of dmax^2 (a hinge along a bone, or a bone scaled
 * to almost nothing). */
#define CB_IK_DIR_EPS 1e-4f
#define CB_IK_STRAIGHT_EPS 1e-3f
#define CB_IK_NEAR_EPS 1e-5f
#define CB_IK_HINGE_EPS 1e-5f

#endif
