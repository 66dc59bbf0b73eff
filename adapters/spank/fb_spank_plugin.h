/* fb_spank_plugin.h - what every fabricbus SPANK plugin exports, and how.
 *
 * slurmstepd, slurmd, srun, sbatch and salloc dlopen() a SPANK plugin into
 * their own address space. The plugins are built with hidden visibility
 * (gnu_symbol_visibility in meson) so that no helper of ours interposes on
 * a symbol of the host program or of another plugin; only Slurm's identity
 * symbols and the slurm_spank_* callbacks leave the module. Both plugins
 * (spank_fabricbus.so, adapters/pmix's spank_fabricbus_pmix.so) declare
 * them through this header, so that the rule stays in one place.
 * Include after <slurm/spank.h>.
 */
#ifndef FB_SPANK_PLUGIN_H
#define FB_SPANK_PLUGIN_H

/* Marks a slurm_spank_* callback as the module's, visible to Slurm. */
#define FB_EXPORT __attribute__((visibility("default")))

/* The identity Slurm reads (plugin_name, plugin_type, versions), exported,
 * for the plugin called name (as in plugstack.conf's logs). */
#define FB_SPANK_PLUGIN(name)                                  \
	FB_EXPORT extern const char plugin_name[];             \
	FB_EXPORT extern const char plugin_type[];             \
	FB_EXPORT extern const unsigned int plugin_version;    \
	FB_EXPORT extern const unsigned int spank_plugin_version; \
	SPANK_PLUGIN(name, 1)

#endif
