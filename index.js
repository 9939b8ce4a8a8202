// n8n loads the nodes and the credential listed under "n8n" in package.json; nothing is exported here.
module.exports = {};
