// Someone else's plugin under approvalbot's file name.
export const Plugin = async () => ({});
